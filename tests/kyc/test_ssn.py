"""`Ssn`: exactly 9 digits, required when the effective nationality is US or USA; stored with
the verification provider as `tin`, forwarded to the card provider as `ssn`, never returned."""

from __future__ import annotations

import json

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.providers.cards.sandbox.holder_accounts import SandboxHolderAccount
from finplat.providers.identity.sandbox.models import SandboxApplicant
from tests.onboarding import create_user, decide, start_kyc

SSN = "123456789"


async def kyc_url(api: httpx.AsyncClient, user_id: int, body: dict[str, object]) -> httpx.Response:
    return await api.post(f"/api/v2/users/{user_id}/sumsub/kyc-url", json=body)


async def test_us_user_without_ssn_is_refused(api: httpx.AsyncClient) -> None:
    user = await create_user(api, Country="US")
    response = await kyc_url(api, user["Id"], {})
    assert response.status_code == 400
    assert response.json()["Code"] == "SSN_REQUIRED"
    assert "Ssn" in response.json()["ValidationErrors"]


async def test_refused_request_leaves_the_user_not_started(api: httpx.AsyncClient) -> None:
    user = await create_user(api, Country="US")
    await kyc_url(api, user["Id"], {})
    assert (await api.get(f"/api/v2/users/{user['Id']}")).json()["KycStatus"] == "NOT_STARTED"


async def test_us_user_with_nine_digits_is_accepted(api: httpx.AsyncClient) -> None:
    user = await create_user(api, Country="US")
    response = await kyc_url(api, user["Id"], {"Ssn": SSN})
    assert response.status_code == 200


@pytest.mark.parametrize(
    "ssn", ["12345678", "1234567890", "12345678a", "123-45-678", "", 123456789]
)
async def test_ssn_must_be_exactly_nine_digits(api: httpx.AsyncClient, ssn: object) -> None:
    user = await create_user(api, Country="US")
    response = await kyc_url(api, user["Id"], {"Ssn": ssn})
    assert response.status_code == 400
    assert "Ssn" in response.json()["ValidationErrors"]


@pytest.mark.parametrize("nationality", ["US", "USA"])
async def test_us_nationality_requires_ssn_for_a_non_us_resident(
    api: httpx.AsyncClient, nationality: str
) -> None:
    user = await create_user(api, Country="GB")
    response = await kyc_url(api, user["Id"], {"Nationality": nationality})
    assert response.status_code == 400


async def test_non_us_nationality_of_a_us_resident_needs_no_ssn(api: httpx.AsyncClient) -> None:
    user = await create_user(api, Country="US")
    response = await kyc_url(api, user["Id"], {"Nationality": "GB"})
    assert response.status_code == 200


async def test_non_us_user_needs_no_ssn(api: httpx.AsyncClient) -> None:
    user = await create_user(api, Country="DE")
    assert (await kyc_url(api, user["Id"], {})).status_code == 200


async def test_ssn_is_never_returned(api: httpx.AsyncClient) -> None:
    user = await create_user(api, Country="US")
    response = await kyc_url(api, user["Id"], {"Ssn": SSN})
    assert SSN not in response.text
    status = await api.get(f"/api/v2/users/{user['Id']}/kyc/detailed-status")
    assert SSN not in status.text


async def test_ssn_is_stored_with_the_verification_provider_as_tin(
    api: httpx.AsyncClient, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    user = await create_user(api, Country="US")
    session = await start_kyc(api, user["Id"], Ssn=SSN)
    async with session_factory() as db:
        applicant = (
            await db.execute(
                select(SandboxApplicant).where(
                    SandboxApplicant.applicant_id == session["ApplicantId"]
                )
            )
        ).scalar_one()
    assert applicant.tin == SSN
    assert SSN not in applicant.questionnaire


async def test_ssn_is_forwarded_to_the_card_provider_as_ssn(
    api: httpx.AsyncClient, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    user = await create_user(api, Country="US")
    await start_kyc(api, user["Id"], Ssn=SSN)
    report = await decide(api, user["Id"], "APPROVED")
    account_id = next(p for p in report["Providers"] if p["Provider"] == "cardprov")["AccountId"]
    async with session_factory() as db:
        account = (
            await db.execute(
                select(SandboxHolderAccount).where(SandboxHolderAccount.account_id == account_id)
            )
        ).scalar_one()
    assert account.ssn == SSN
    assert SSN not in json.dumps(account.holder)


async def test_ssn_applies_to_every_kyc_method(api: httpx.AsyncClient) -> None:
    user = await create_user(api, Country="US")
    for path, body in (
        ("kyc/sdk-token", {}),
        (
            "kyc/manual",
            {
                "Document": {
                    "Type": "PASSPORT",
                    "Number": "X1234567",
                    "IssuingCountry": "US",
                    "IssueDate": "2020-01-01",
                }
            },
        ),
        ("kyc/reusable-identity", {"ShareToken": "sbx_share_unknown"}),
    ):
        response = await api.post(f"/api/v2/users/{user['Id']}/{path}", json=body)
        assert (response.status_code, response.json()["Code"]) == (400, "SSN_REQUIRED"), path
