"""Crypto enhanced due diligence: every field required, stored with the verification
provider, visible in the KYC detailed status, required above the threshold."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from finplat.providers.identity.sandbox.models import SandboxApplicant
from tests.conftest import Tenant
from tests.crypto.steps import crypto_banking_user
from tests.onboarding import approved_user, create_user

PATH = "/api/v2/crypto-virtual-accounts/verification/edd"
FIELDS = (
    "CapitalOfCompany",
    "GiftOrInheritance",
    "ProfitFromSoldOrMaturingInvestments",
    "ProfitsFromPropertySale",
    "ProfitsFromSaleOfCompany",
    "CompensationPayment",
    "Pension",
    "Other",
    "ProfessionalSalary",
    "FileUrls",
)


def edd_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "CapitalOfCompany": "None",
        "GiftOrInheritance": "Inheritance, 2021",
        "ProfitFromSoldOrMaturingInvestments": "ETF sale, 2024",
        "ProfitsFromPropertySale": "None",
        "ProfitsFromSaleOfCompany": "None",
        "CompensationPayment": "None",
        "Pension": "None",
        "Other": "None",
        "ProfessionalSalary": {"AnnualAmount": 85000, "Currency": "EUR", "Employer": "AE Ltd"},
        "FileUrls": ["https://files.example.com/payslip.pdf"],
    }
    body.update(overrides)
    return {k: v for k, v in body.items() if v is not ...}


async def test_an_edd_is_stored_with_the_verification_provider(
    app: FastAPI, api: httpx.AsyncClient, tenant: Tenant
) -> None:
    user = await approved_user(api)
    response = await api.post(PATH, params={"userId": user["Id"]}, json=edd_body())
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "SUBMITTED"
    async with app.state.session_factory() as session:
        questionnaires = (
            await session.execute(
                select(SandboxApplicant.questionnaire).where(
                    SandboxApplicant.company_id == tenant.company_id
                )
            )
        ).scalars()
        assert any('"cryptoEdd"' in q and "ETF sale, 2024" in q for q in questionnaires)


async def test_the_edd_shows_in_the_kyc_detailed_status(api: httpx.AsyncClient) -> None:
    user = await approved_user(api)
    before = await api.get(f"/api/v2/users/{user['Id']}/kyc/detailed-status")
    assert before.json()["CryptoEdd"] is None
    await api.post(PATH, params={"userId": user["Id"]}, json=edd_body())
    after = await api.get(f"/api/v2/users/{user['Id']}/kyc/detailed-status")
    assert after.json()["CryptoEdd"]["Status"] == "SUBMITTED"


async def test_every_missing_field_is_named(api: httpx.AsyncClient) -> None:
    user = await approved_user(api)
    response = await api.post(PATH, params={"userId": user["Id"]}, json={})
    assert response.status_code == 400
    assert set(response.json()["ValidationErrors"]) == set(FIELDS)


@pytest.mark.parametrize("field", FIELDS)
async def test_each_field_is_required(api: httpx.AsyncClient, field: str) -> None:
    user = await approved_user(api)
    response = await api.post(PATH, params={"userId": user["Id"]}, json=edd_body(**{field: ...}))
    assert response.status_code == 400
    assert list(response.json()["ValidationErrors"]) == [field]


async def test_the_salary_needs_its_amount_and_currency(api: httpx.AsyncClient) -> None:
    user = await approved_user(api)
    response = await api.post(
        PATH, params={"userId": user["Id"]}, json=edd_body(ProfessionalSalary={"Employer": "x"})
    )
    assert response.status_code == 400
    assert set(response.json()["ValidationErrors"]) == {
        "ProfessionalSalary.AnnualAmount",
        "ProfessionalSalary.Currency",
    }


async def test_an_unverified_user_cannot_submit(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    response = await api.post(PATH, params={"userId": user["Id"]}, json=edd_body())
    assert response.status_code == 409
    assert response.json()["Code"] == "KYC_NOT_APPROVED"


async def test_an_exchange_at_the_threshold_needs_the_edd(api: httpx.AsyncClient) -> None:
    user, budget = await crypto_banking_user(api, "20000")
    body = {
        "CryptoCurrency": "USDC",
        "Amount": 10000,
        "FiatCurrency": "EUR",
        "BudgetId": budget["BudgetId"],
    }
    quote = "/api/v2/crypto-virtual-accounts/exchange/quote"
    refused = await api.post(quote, params={"userId": user["Id"]}, json=body)
    assert refused.status_code == 409
    assert refused.json()["Code"] == "EDD_REQUIRED"
    below = await api.post(quote, params={"userId": user["Id"]}, json=body | {"Amount": 9999})
    assert below.status_code == 201
    await api.post(PATH, params={"userId": user["Id"]}, json=edd_body())
    allowed = await api.post(quote, params={"userId": user["Id"]}, json=body)
    assert allowed.status_code == 201, allowed.text
