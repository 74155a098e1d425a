"""The verification provider's review, applied to the user and each selected provider."""

from __future__ import annotations

import httpx
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.events.models import Event
from tests.onboarding import create_user, decide, provider_status, select_tier, start_kyc


async def events_of(
    session_factory: async_sessionmaker[AsyncSession], company_id: int, type_: str
) -> list[Event]:
    async with session_factory() as db:
        stmt = select(Event).where(Event.company_id == company_id, Event.type == type_)
        return list((await db.execute(stmt.order_by(Event.created_at))).scalars())


async def test_approval_makes_the_user_approved(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    await start_kyc(api, user["Id"])
    report = await decide(api, user["Id"], "APPROVED")
    assert report["KycStatus"] == "APPROVED"
    assert (await api.get(f"/api/v2/users/{user['Id']}")).json()["KycStatus"] == "APPROVED"


async def test_approval_provisions_the_default_card_provider_account(
    api: httpx.AsyncClient,
) -> None:
    user = await create_user(api)
    await start_kyc(api, user["Id"])
    cardprov = provider_status(await decide(api, user["Id"], "APPROVED"), "cardprov")
    assert cardprov["Status"] == "APPROVED"
    assert cardprov["HasAccount"] is True
    assert cardprov["AccountId"].startswith("cardprov_acct_")


async def test_rejection_makes_the_user_and_providers_rejected(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    await select_tier(api, user["Id"], "Personal Premium")
    await start_kyc(api, user["Id"])
    report = await decide(api, user["Id"], "REJECTED")
    assert report["KycStatus"] == "REJECTED"
    statuses = {p["Provider"]: p["Status"] for p in report["Providers"]}
    assert statuses == {"cardprov": "REJECTED", "switchprov": "REJECTED", "bankprov": "rejected"}


async def test_rejected_user_cannot_restart_kyc(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    await start_kyc(api, user["Id"])
    await decide(api, user["Id"], "REJECTED")
    response = await api.post(f"/api/v2/users/{user['Id']}/sumsub/kyc-url", json={})
    assert (response.status_code, response.json()["Code"]) == (409, "KYC_REJECTED")


async def test_resubmission_lets_the_user_start_again(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    await start_kyc(api, user["Id"])
    assert (await decide(api, user["Id"], "RESUBMISSION"))["KycStatus"] == "RESUBMISSION_REQUIRED"
    again = await start_kyc(api, user["Id"])
    assert again["ExistingStatus"] == "RESUBMISSION_REQUIRED"
    assert again["Status"] == "PENDING"
    assert (await decide(api, user["Id"], "APPROVED"))["KycStatus"] == "APPROVED"


async def test_approved_user_cannot_restart_kyc(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    await start_kyc(api, user["Id"])
    await decide(api, user["Id"], "APPROVED")
    response = await api.post(f"/api/v2/users/{user['Id']}/sumsub/kyc-url", json={})
    assert (response.status_code, response.json()["Code"]) == (409, "KYC_ALREADY_APPROVED")


async def test_banking_provider_is_pending_once_kyc_starts(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    await select_tier(api, user["Id"], "Personal Plus")
    await start_kyc(api, user["Id"])
    report = (await api.get(f"/api/v2/users/{user['Id']}/kyc/detailed-status")).json()
    assert provider_status(report, "bankprov")["Status"] == "PENDING"


async def test_banking_provider_needs_documents_on_resubmission(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    await select_tier(api, user["Id"], "Personal Plus")
    await start_kyc(api, user["Id"])
    report = await decide(api, user["Id"], "RESUBMISSION")
    assert provider_status(report, "bankprov")["Status"] == "pending_documents"


async def test_banking_provider_stays_pending_while_its_onboarding_is_unfinished(
    api: httpx.AsyncClient,
) -> None:
    user = await create_user(api)
    await select_tier(api, user["Id"], "Personal Plus")
    await start_kyc(api, user["Id"])
    report = await decide(api, user["Id"], "APPROVED")
    assert report["KycStatus"] == "APPROVED"
    assert provider_status(report, "bankprov")["Status"] == "PENDING"


async def test_switch_provider_becomes_eligible_on_approval(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    await select_tier(api, user["Id"], "Personal Plus")
    await start_kyc(api, user["Id"])
    switch = provider_status(await decide(api, user["Id"], "APPROVED"), "switchprov")
    assert (switch["Status"], switch["HasAccount"]) == ("ELIGIBLE", False)


async def test_banking_status_changes_emit_account_status_updated(
    api: httpx.AsyncClient, tenant: object, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    user = await create_user(api)
    await select_tier(api, user["Id"], "Personal Plus")
    await start_kyc(api, user["Id"])
    await decide(api, user["Id"], "RESUBMISSION")
    events = await events_of(session_factory, tenant.company_id, "account.status_updated")  # type: ignore[attr-defined]
    assert [e.domain for e in events] == ["account", "account"]
    assert [e.provider for e in events] == ["bankprov", "bankprov"]
    assert '"status":"pending_documents"' in events[-1].body


async def test_review_is_reported_with_kyc_status_updated(
    api: httpx.AsyncClient, tenant: object, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    user = await create_user(api)
    await start_kyc(api, user["Id"])
    await decide(api, user["Id"], "APPROVED")
    events = await events_of(session_factory, tenant.company_id, "kyc.status_updated")  # type: ignore[attr-defined]
    assert len(events) == 1
    assert '"status":"APPROVED"' in events[0].body


async def test_sandbox_decision_needs_a_started_kyc(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    response = await api.post(
        f"/api/v2/sandbox/users/{user['Id']}/kyc/complete", json={"Outcome": "APPROVED"}
    )
    assert (response.status_code, response.json()["Code"]) == (409, "KYC_NOT_STARTED")


async def test_manual_payload_is_decided_by_the_provider(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    document = {
        "Type": "ID_CARD",
        "Number": "AB12345",
        "IssuingCountry": "FR",
        "IssueDate": "2021-03-01",
    }
    response = await api.post(f"/api/v2/users/{user['Id']}/kyc/manual", json={"Document": document})
    assert response.status_code == 200
    assert (await decide(api, user["Id"], "APPROVED"))["KycStatus"] == "APPROVED"
