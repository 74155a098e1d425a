"""The hosted verification link and the other KYC methods (spec: "KYC session")."""

from __future__ import annotations

from datetime import datetime, timedelta

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.providers.identity.sandbox.models import SandboxApplicant
from tests.onboarding import create_user, start_kyc


async def test_kyc_url_moves_user_from_not_started_to_pending(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    session = await start_kyc(api, user["Id"])
    assert session["Status"] == "PENDING"
    assert session["ExistingStatus"] == "NOT_STARTED"
    assert (await api.get(f"/api/v2/users/{user['Id']}")).json()["KycStatus"] == "PENDING"


async def test_kyc_url_returns_the_full_session(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    session = await start_kyc(api, user["Id"], Occupation="Engineer", IpAddress="203.0.113.7")
    assert session["Success"] is True
    assert session["Method"] == "HOSTED_LINK"
    assert session["AccessToken"]
    assert session["ApplicantId"]
    assert session["ExternalUserId"] == user["ExternalUserId"]
    assert isinstance(session["KycSubmissionId"], int)
    assert session["IsNewApplicant"] is True
    assert session["Message"]
    assert session["Configuration"] == {"levelName": "basic-kyc-level"}
    assert session["Url"].startswith("http://finplat.test/sandbox/identity/verify#token=")
    assert session["AccessToken"] in session["Url"]


@pytest.mark.parametrize("address", ["203.0.113.7", "2001:db8::1%eth0", "203.0.113.7:51234"])
async def test_the_ip_address_is_taken_as_the_caller_saw_it(
    api: httpx.AsyncClient, address: str
) -> None:
    user = await create_user(api)
    session = await start_kyc(api, user["Id"], IpAddress=address)
    assert session["Status"] == "PENDING"


async def test_an_ip_address_longer_than_64_characters_is_refused(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    response = await api.post(
        f"/api/v2/users/{user['Id']}/sumsub/kyc-url", json={"IpAddress": "1" * 65}
    )
    assert response.status_code == 400
    assert list(response.json()["ValidationErrors"]) == ["IpAddress"]


async def test_access_token_is_short_lived(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    session = await start_kyc(api, user["Id"])
    expires_at = datetime.fromisoformat(session["ExpiresAt"])
    created_at = datetime.fromisoformat(session["CreatedAt"])
    assert timedelta(0) < expires_at - created_at <= timedelta(minutes=15)


async def test_second_link_keeps_the_applicant_and_reports_existing_status(
    api: httpx.AsyncClient,
) -> None:
    user = await create_user(api)
    first = await start_kyc(api, user["Id"])
    second = await start_kyc(api, user["Id"])
    assert second["ApplicantId"] == first["ApplicantId"]
    assert second["KycSubmissionId"] == first["KycSubmissionId"]
    assert second["IsNewApplicant"] is False
    assert second["ExistingStatus"] == "PENDING"
    assert second["AccessToken"] != first["AccessToken"]


async def test_business_user_gets_the_representative_level(api: httpx.AsyncClient) -> None:
    user = await create_user(api, AccountType="business")
    session = await start_kyc(api, user["Id"])
    assert session["Configuration"] == {"levelName": "business-representative-kyc-level"}


async def test_a_user_has_exactly_one_kyc_method(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    await start_kyc(api, user["Id"])
    response = await api.post(f"/api/v2/users/{user['Id']}/kyc/sdk-token", json={})
    assert response.status_code == 409
    assert response.json()["Code"] == "KYC_METHOD_ALREADY_CHOSEN"


async def test_sdk_token_has_no_hosted_url(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    response = await api.post(f"/api/v2/users/{user['Id']}/kyc/sdk-token", json={})
    assert response.status_code == 200
    body = response.json()
    assert body["Method"] == "MOBILE_SDK"
    assert body["AccessToken"]
    assert body["Url"] is None


async def test_manual_payload_starts_a_review(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    document = {
        "Type": "PASSPORT",
        "Number": "123456789",
        "IssuingCountry": "GB",
        "IssueDate": "2020-01-15",
        "ExpiryDate": "2030-01-14",
    }
    response = await api.post(f"/api/v2/users/{user['Id']}/kyc/manual", json={"Document": document})
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["Method"], body["Status"], body["AccessToken"]) == ("MANUAL", "PENDING", None)


async def test_kyc_for_another_companys_user_is_not_found(
    api: httpx.AsyncClient, make_tenant: object
) -> None:
    other = await make_tenant("Other Co")  # type: ignore[operator]
    user = await create_user(other.client)
    response = await api.post(f"/api/v2/users/{user['Id']}/sumsub/kyc-url", json={})
    assert response.status_code == 404


async def test_questionnaire_answers_reach_the_provider(
    api: httpx.AsyncClient, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    user = await create_user(api)
    session = await start_kyc(api, user["Id"], Occupation="Engineer", AnnualSalary="50k-100k")
    async with session_factory() as db:
        applicant = (
            await db.execute(
                select(SandboxApplicant).where(
                    SandboxApplicant.applicant_id == session["ApplicantId"]
                )
            )
        ).scalar_one()
    assert '"Occupation": "Engineer"' in applicant.questionnaire
