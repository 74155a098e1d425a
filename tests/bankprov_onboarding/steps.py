"""Steps of the banking-provider personal onboarding over HTTP."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx

from finplat.kit.clock import today
from tests.documents import samples
from tests.onboarding import approved_user, provider_status, select_tier

Files = list[tuple[str, tuple[str, bytes, str]]]


def onboarding_fields(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "RequestedFeatures": ["PAYMENTS", "CARDS"],
        "MainPurpose": "Everyday spending and saving",
        "SourceOfFunds": "Salary",
        "DestinationOfFunds": "GB",
        "CurrenciesRequired": "EUR,GBP",
        "AnnualVolume": "10000-50000",
        "NumberOfPayments": "10-50",
        "CardPurposes": "Travel",
        "AtmWithdrawalsRequired": "true",
        "NumberOfCardsRequired": "1",
        "CardAnnualSpend": "5000+",
        "ProofOfAddressDate": (today() - timedelta(days=10)).isoformat(),
    }
    fields.update(overrides)
    return {k: v for k, v in fields.items() if v is not ...}


def proof(data: bytes | None = None, name: str = "statement.pdf") -> Files:
    return [("ProofOfAddress", (name, samples.pdf() if data is None else data, "application/pdf"))]


async def submit(
    api: httpx.AsyncClient, user_id: int, *, files: Files | None = None, **fields: Any
) -> httpx.Response:
    return await api.post(
        "/api/v2/banking/bankprov-onboarding",
        params={"userId": user_id},
        data=onboarding_fields(**fields),
        files=proof() if files is None else files,
    )


async def eligible_user(api: httpx.AsyncClient) -> dict[str, Any]:
    """A personal user on a tier with the banking provider, base KYC approved."""
    user = await approved_user(api)
    await select_tier(api, user["Id"], "Personal Premium")
    return user


async def onboarded_user(api: httpx.AsyncClient) -> dict[str, Any]:
    user = await eligible_user(api)
    response = await submit(api, user["Id"])
    assert response.status_code == 202, response.text
    return {**user, "AccountId": response.json()["AccountId"]}


def documents(*contents: bytes, field: str = "Files") -> Files:
    return [
        (field, (f"doc{i}.bin", data, "application/octet-stream"))
        for i, data in enumerate(contents)
    ]


async def upload(api: httpx.AsyncClient, user_id: int, files: Files) -> httpx.Response:
    return await api.post(f"/api/v2/users/{user_id}/kyc/bankprov/documents", files=files)


async def bankprov_status(api: httpx.AsyncClient, user_id: int) -> str:
    report = (await api.get("/api/v2/banking/providers", params={"userId": user_id})).json()
    return str(provider_status(report, "bankprov")["Status"])
