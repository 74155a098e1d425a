"""Provisioning the card-provider account and the switch-provider link (spec rules 4 and 5)."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.kyc.approval import KycNotApproved
from finplat.providers.cards.sandbox.holder_accounts import SandboxHolderAccount
from finplat.provisioning import card_accounts
from finplat.provisioning.card_accounts import ProviderNotSelected
from tests.conftest import Tenant
from tests.onboarding import (
    approved_user,
    create_user,
    decide,
    provider_status,
    select_tier,
    set_fault,
    start_kyc,
)


async def repair(api: httpx.AsyncClient, user_id: int) -> httpx.Response:
    return await api.post(f"/api/v2/users/create-cardprov-account/{user_id}")


async def accounts_at_provider(
    session_factory: async_sessionmaker[AsyncSession], provider: str
) -> int:
    async with session_factory() as db:
        stmt = select(func.count()).where(SandboxHolderAccount.provider == provider)
        return int((await db.execute(stmt)).scalar_one())


async def test_user_creation_opens_no_account_before_kyc(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    report = (await api.get(f"/api/v2/users/{user['Id']}/kyc/detailed-status")).json()
    assert provider_status(report, "cardprov") | {"UpdatedAt": None} == {
        "Provider": "cardprov",
        "ProviderType": 1,
        "Status": "NOT_STARTED",
        "HasAccount": False,
        "AccountId": None,
        "UpdatedAt": None,
    }


async def test_repair_before_approval_is_a_conflict(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    response = await repair(api, user["Id"])
    assert (response.status_code, response.json()["Code"]) == (409, "KYC_NOT_APPROVED")


async def test_repair_of_a_provisioned_user_returns_the_same_account(
    api: httpx.AsyncClient, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    user = await approved_user(api)
    first = (await repair(api, user["Id"])).json()
    second = (await repair(api, user["Id"])).json()
    assert first["Created"] is False
    assert second == first
    assert await accounts_at_provider(session_factory, "cardprov") == 1


async def test_provider_timeout_during_provisioning_is_repaired(
    api: httpx.AsyncClient, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    user = await create_user(api)
    await start_kyc(api, user["Id"])
    await set_fault(api, "cardprov", "create_account", "timeout")
    report = await decide(api, user["Id"], "APPROVED")
    assert report["KycStatus"] == "APPROVED"
    assert provider_status(report, "cardprov")["HasAccount"] is False
    repaired = await repair(api, user["Id"])
    assert repaired.status_code == 200
    assert repaired.json()["Created"] is True
    assert repaired.json()["Status"] == "APPROVED"
    # The timed-out call had opened it: the repair found that account, not a second one.
    assert await accounts_at_provider(session_factory, "cardprov") == 1


async def test_repair_during_a_provider_outage_is_a_503_then_succeeds(
    api: httpx.AsyncClient,
) -> None:
    user = await create_user(api)
    await start_kyc(api, user["Id"])
    await set_fault(api, "cardprov", "create_account", "transient", count=10)
    await decide(api, user["Id"], "APPROVED")
    assert (await repair(api, user["Id"])).status_code == 503
    await api.delete("/api/v2/sandbox/faults")
    assert (await repair(api, user["Id"])).json()["Created"] is True


async def test_pending_account_is_decided_by_the_provider(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    await start_kyc(api, user["Id"])
    await set_fault(api, "cardprov", "create_account", "pending")
    report = await decide(api, user["Id"], "APPROVED")
    assert provider_status(report, "cardprov")["Status"] == "PENDING"
    report = await decide(api, user["Id"], "APPROVED", provider="cardprov")
    assert provider_status(report, "cardprov")["Status"] == "APPROVED"


async def test_card_provider_account_cannot_be_resubmitted(api: httpx.AsyncClient) -> None:
    user = await approved_user(api)
    response = await api.post(
        f"/api/v2/sandbox/users/{user['Id']}/kyc/complete",
        json={"Outcome": "RESUBMISSION", "Provider": "cardprov"},
    )
    assert response.status_code == 400


async def test_banking_providers_lists_each_provider_state(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    await select_tier(api, user["Id"], "Personal Premium")
    await start_kyc(api, user["Id"])
    await decide(api, user["Id"], "APPROVED")
    response = await api.get("/api/v2/banking/providers", params={"userId": user["Id"]})
    assert response.status_code == 200
    states = {p["Provider"]: (p["ProviderType"], p["Status"]) for p in response.json()["Providers"]}
    assert states == {
        "cardprov": (1, "APPROVED"),
        "switchprov": (3, "ELIGIBLE"),
        "bankprov": (2, "PENDING"),
    }


async def test_banking_providers_of_another_companys_user_is_not_found(
    api: httpx.AsyncClient, make_tenant: object
) -> None:
    other: Tenant = await make_tenant("Other Co")  # type: ignore[operator]
    user = await create_user(other.client)
    response = await api.get("/api/v2/banking/providers", params={"userId": user["Id"]})
    assert response.status_code == 404


async def test_switch_link_is_created_once_for_an_eligible_user(
    api: httpx.AsyncClient,
    app: FastAPI,
    tenant: Tenant,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    user = await create_user(api)
    await select_tier(api, user["Id"], "Personal Plus")
    await start_kyc(api, user["Id"])
    await decide(api, user["Id"], "APPROVED")
    async with session_factory() as db:
        first = await card_accounts.ensure_switch_link(
            db, app.state.providers, company_id=tenant.company_id, user_id=user["Id"]
        )
        again = await card_accounts.ensure_switch_link(
            db, app.state.providers, company_id=tenant.company_id, user_id=user["Id"]
        )
        await db.commit()
    assert (first.created, again.created) == (True, False)
    assert first.account.provider_account_id == again.account.provider_account_id
    assert first.account.status == "APPROVED"
    assert await accounts_at_provider(session_factory, "switchprov") == 1


async def test_switch_link_needs_a_tier_with_switch_products(
    api: httpx.AsyncClient,
    app: FastAPI,
    tenant: Tenant,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    user = await approved_user(api)  # Personal Basic: card provider only
    async with session_factory() as db:
        with pytest.raises(ProviderNotSelected):
            await card_accounts.ensure_switch_link(
                db, app.state.providers, company_id=tenant.company_id, user_id=user["Id"]
            )


async def test_switch_link_needs_kyc_approval(
    api: httpx.AsyncClient,
    app: FastAPI,
    tenant: Tenant,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    user = await create_user(api)
    await select_tier(api, user["Id"], "Personal Plus")
    async with session_factory() as db:
        with pytest.raises(KycNotApproved):
            await card_accounts.ensure_switch_link(
                db, app.state.providers, company_id=tenant.company_id, user_id=user["Id"]
            )


async def test_no_card_account_when_the_card_provider_is_not_the_company_default(
    api: httpx.AsyncClient,
) -> None:
    response = await api.put(
        "/api/v2/company/configuration", json={"DefaultCardProvider": "switchprov"}
    )
    assert response.json()["DefaultCardProvider"] == "switchprov"
    user = await create_user(api)
    await start_kyc(api, user["Id"])
    report = await decide(api, user["Id"], "APPROVED")
    cardprov = provider_status(report, "cardprov")
    assert (cardprov["Status"], cardprov["HasAccount"]) == ("ELIGIBLE", False)
    repaired = await repair(api, user["Id"])
    assert repaired.json()["Created"] is True
