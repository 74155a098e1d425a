"""Reusable identity: a verified person shares their identity with another partner."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.config import Settings
from finplat.kit.clock import set_clock
from finplat.providers.sandbox import delivery as sandbox_delivery
from tests.conftest import Tenant
from tests.onboarding import approved_user, create_user


async def share_token(api: httpx.AsyncClient, user_id: int) -> str:
    response = await api.post(f"/api/v2/users/{user_id}/kyc/share-token")
    assert response.status_code == 200, response.text
    return str(response.json()["ShareToken"])


async def reuse(api: httpx.AsyncClient, user_id: int, token: str) -> httpx.Response:
    return await api.post(
        f"/api/v2/users/{user_id}/kyc/reusable-identity", json={"ShareToken": token}
    )


async def deliver(session_factory: async_sessionmaker[AsyncSession], settings: Settings) -> None:
    await sandbox_delivery.deliver_due(session_factory, secret=settings.provider_callback_secret)


async def test_shared_identity_of_the_same_person_is_approved(
    api: httpx.AsyncClient,
    make_tenant: object,
    session_factory: async_sessionmaker[AsyncSession],
    settings: Settings,
) -> None:
    donor = await approved_user(api, FirstName="Grace", LastName="Hopper")
    token = await share_token(api, donor["Id"])
    other: Tenant = await make_tenant("Second Partner")  # type: ignore[operator]
    user = await create_user(other.client, FirstName="Grace", LastName="Hopper")
    response = await reuse(other.client, user["Id"], token)
    assert response.status_code == 200
    assert (response.json()["Method"], response.json()["Status"]) == (
        "REUSABLE_IDENTITY",
        "PENDING",
    )
    await deliver(session_factory, settings)
    assert (await other.client.get(f"/api/v2/users/{user['Id']}")).json()["KycStatus"] == (
        "APPROVED"
    )


async def test_shared_identity_of_another_person_is_rejected(
    api: httpx.AsyncClient,
    session_factory: async_sessionmaker[AsyncSession],
    settings: Settings,
) -> None:
    donor = await approved_user(api, FirstName="Grace", LastName="Hopper")
    token = await share_token(api, donor["Id"])
    user = await create_user(api, FirstName="Alan", LastName="Turing")
    assert (await reuse(api, user["Id"], token)).status_code == 200
    await deliver(session_factory, settings)
    assert (await api.get(f"/api/v2/users/{user['Id']}")).json()["KycStatus"] == "REJECTED"


async def test_share_token_works_once(api: httpx.AsyncClient) -> None:
    donor = await approved_user(api, FirstName="Grace", LastName="Hopper")
    token = await share_token(api, donor["Id"])
    first = await create_user(api, FirstName="Grace", LastName="Hopper")
    second = await create_user(api, FirstName="Grace", LastName="Hopper")
    assert (await reuse(api, first["Id"], token)).status_code == 200
    response = await reuse(api, second["Id"], token)
    assert (response.status_code, response.json()["Code"]) == (404, "SHARE_TOKEN_NOT_FOUND")


async def test_unverified_user_cannot_share(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    response = await api.post(f"/api/v2/users/{user['Id']}/kyc/share-token")
    assert (response.status_code, response.json()["Code"]) == (409, "KYC_NOT_APPROVED")


async def test_a_review_delivered_before_the_start_is_recorded_is_applied_when_delivered_again(
    api: httpx.AsyncClient,
    app: FastAPI,
    session_factory: async_sessionmaker[AsyncSession],
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A shared identity is reviewed at once, so the review can reach the platform before
    the start has recorded the applicant: it is refused then, and the provider's next delivery
    applies it instead of it being dropped with the user left PENDING."""
    donor = await approved_user(api, FirstName="Grace", LastName="Hopper")
    token = await share_token(api, donor["Id"])
    user = await create_user(api, FirstName="Grace", LastName="Hopper")
    identity = app.state.providers.identity
    original = identity.import_shared_identity

    async def reviewed_and_delivered_before_the_answer(**call: Any) -> None:
        await original(**call)
        await deliver(session_factory, settings)

    monkeypatch.setattr(
        identity, "import_shared_identity", reviewed_and_delivered_before_the_answer
    )
    response = await reuse(api, user["Id"], token)
    assert response.status_code == 200, response.text
    assert (await api.get(f"/api/v2/users/{user['Id']}")).json()["KycStatus"] == "PENDING"
    set_clock(lambda: datetime.now(UTC) + timedelta(seconds=5))  # the redelivery is due
    await deliver(session_factory, settings)
    assert (await api.get(f"/api/v2/users/{user['Id']}")).json()["KycStatus"] == "APPROVED"
