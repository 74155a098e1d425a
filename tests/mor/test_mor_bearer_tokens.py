"""MOR simple users' bearer tokens: sign-in, its throttle, expiry, revocation and the
bearer-gated self-service routes."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
from fastapi import FastAPI
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.auth import failure_throttle
from finplat.kit.clock import set_clock
from finplat.users.models import User
from tests.conftest import Tenant, TenantFactory
from tests.mor.identity_steps import (
    ME,
    PASSWORD,
    REVOKE,
    TOKEN,
    bearer,
    sign_in,
    simple_user,
)


async def test_the_right_email_and_password_give_a_token_living_15_minutes(
    mor_tenant: Tenant,
) -> None:
    user = await simple_user(mor_tenant.client)
    before = datetime.now(UTC)
    response = await mor_tenant.client.post(
        TOKEN, json={"Email": user["Email"].upper(), "Password": PASSWORD}
    )
    assert response.status_code == 200, response.text
    expires = datetime.fromisoformat(response.json()["ExpiresAt"].replace("Z", "+00:00"))
    assert timedelta(minutes=14) < expires - before <= timedelta(minutes=15, seconds=5)
    assert response.json()["AccessToken"].startswith("mor_at_")


async def test_a_wrong_password_and_an_unknown_email_get_the_same_401(
    mor_tenant: Tenant,
) -> None:
    user = await simple_user(mor_tenant.client)
    wrong = await mor_tenant.client.post(
        TOKEN, json={"Email": user["Email"], "Password": "not-the-password-1"}
    )
    unknown = await mor_tenant.client.post(
        TOKEN, json={"Email": "nobody@example.com", "Password": PASSWORD}
    )
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json()
    assert wrong.json()["Code"] == "INVALID_CREDENTIALS"
    assert "not-the-password-1" not in wrong.text


@pytest.fixture
def throttle_clock_still(monkeypatch: pytest.MonkeyPatch) -> None:
    """The throttle's windows see every attempt at one instant. Its sliding window is a
    counter's approximation (the previous minute weighs what is left of it), so attempts that
    straddle a minute on a slow machine would weigh less than their number."""
    instant = time.time()
    monkeypatch.setattr(failure_throttle, "time", SimpleNamespace(time=lambda: instant))


@pytest.mark.usefixtures("throttle_clock_still")
async def test_failures_for_one_email_are_throttled_even_for_the_right_password(
    mor_tenant: Tenant,
) -> None:
    user = await simple_user(mor_tenant.client)
    for _ in range(5):
        failed = await mor_tenant.client.post(
            TOKEN, json={"Email": user["Email"], "Password": "guess-number-1"}
        )
        assert failed.status_code == 401
    throttled = await mor_tenant.client.post(
        TOKEN, json={"Email": user["Email"], "Password": PASSWORD}
    )
    assert throttled.status_code == 429
    assert throttled.json()["Code"] == "SIGN_IN_THROTTLED"
    assert int(throttled.headers["Retry-After"]) >= 1


@pytest.mark.usefixtures("throttle_clock_still")
async def test_failures_from_one_address_are_throttled_across_emails(
    mor_tenant: Tenant,
) -> None:
    user = await simple_user(mor_tenant.client)
    for number in range(30):
        failed = await mor_tenant.client.post(
            TOKEN, json={"Email": f"probe-{number}@example.com", "Password": "guess-number-1"}
        )
        assert failed.status_code == 401
    throttled = await mor_tenant.client.post(
        TOKEN, json={"Email": user["Email"], "Password": PASSWORD}
    )
    assert throttled.status_code == 429


async def test_me_needs_a_bearer_token(mor_tenant: Tenant) -> None:
    for headers in ({}, {"Authorization": "Bearer mor_at_made-up"}, {"Authorization": "Basic x"}):
        response = await mor_tenant.client.get(ME, headers=headers)
        assert response.status_code == 401, headers
        assert response.json()["Code"] == "BEARER_TOKEN_INVALID"


async def test_me_is_the_tokens_own_user(mor_tenant: Tenant) -> None:
    first = await simple_user(mor_tenant.client)
    second = await simple_user(mor_tenant.client)
    for user in (first, second):
        token = await sign_in(mor_tenant.client, user["Email"])
        me = await mor_tenant.client.get(ME, headers=bearer(token))
        assert me.status_code == 200, me.text
        assert me.json()["Id"] == user["Id"]
        assert token not in me.text


async def test_a_token_of_one_company_is_401_with_another_companys_key(
    mor_tenant: Tenant, make_tenant: TenantFactory
) -> None:
    other = await make_tenant("Other MOR", mor=True)
    user = await simple_user(mor_tenant.client)
    token = await sign_in(mor_tenant.client, user["Email"])
    response = await other.client.get(ME, headers=bearer(token))
    assert response.status_code == 401


async def test_an_expired_token_is_refused(mor_tenant: Tenant) -> None:
    user = await simple_user(mor_tenant.client)
    token = await sign_in(mor_tenant.client, user["Email"])
    later = datetime.now(UTC) + timedelta(minutes=15, seconds=1)
    set_clock(lambda: later)
    response = await mor_tenant.client.get(ME, headers=bearer(token))
    assert response.status_code == 401


async def test_a_revoked_token_is_refused_and_revoking_again_is_harmless(
    mor_tenant: Tenant,
) -> None:
    user = await simple_user(mor_tenant.client)
    token = await sign_in(mor_tenant.client, user["Email"])
    kept = await sign_in(mor_tenant.client, user["Email"])
    for _ in range(2):
        revoked = await mor_tenant.client.post(REVOKE, json={"AccessToken": token})
        assert revoked.status_code == 204
    assert (await mor_tenant.client.get(ME, headers=bearer(token))).status_code == 401
    assert (await mor_tenant.client.get(ME, headers=bearer(kept))).status_code == 200


async def test_changing_the_password_revokes_every_token_of_the_user(
    mor_tenant: Tenant,
) -> None:
    user = await simple_user(mor_tenant.client)
    first = await sign_in(mor_tenant.client, user["Email"])
    second = await sign_in(mor_tenant.client, user["Email"])
    changed = await mor_tenant.client.post(
        f"{ME}/password",
        headers=bearer(first),
        json={"CurrentPassword": PASSWORD, "NewPassword": "another-horse-battery-7"},
    )
    assert changed.status_code == 204, changed.text
    for token in (first, second):
        assert (await mor_tenant.client.get(ME, headers=bearer(token))).status_code == 401
    old = await mor_tenant.client.post(TOKEN, json={"Email": user["Email"], "Password": PASSWORD})
    assert old.status_code == 401
    await sign_in(mor_tenant.client, user["Email"], "another-horse-battery-7")


async def test_a_password_change_needs_the_current_password(mor_tenant: Tenant) -> None:
    user = await simple_user(mor_tenant.client)
    token = await sign_in(mor_tenant.client, user["Email"])
    refused = await mor_tenant.client.post(
        f"{ME}/password",
        headers=bearer(token),
        json={"CurrentPassword": "not-the-password-1", "NewPassword": "another-horse-battery-7"},
    )
    assert refused.status_code == 403
    assert refused.json()["Code"] == "CURRENT_PASSWORD_WRONG"
    assert (await mor_tenant.client.get(ME, headers=bearer(token))).status_code == 200


async def test_a_user_no_longer_active_neither_signs_in_nor_uses_its_tokens(
    mor_tenant: Tenant, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    user = await simple_user(mor_tenant.client)
    token = await sign_in(mor_tenant.client, user["Email"])
    async with session_factory() as session:
        await session.execute(update(User).where(User.id == user["Id"]).values(status="DISABLED"))
        await session.commit()
    assert (await mor_tenant.client.get(ME, headers=bearer(token))).status_code == 401
    again = await mor_tenant.client.post(TOKEN, json={"Email": user["Email"], "Password": PASSWORD})
    assert again.status_code == 401


async def test_the_document_says_a_self_service_route_needs_the_key_and_the_bearer(
    app: FastAPI,
) -> None:
    document = app.openapi()
    for path, method in ((ME, "get"), (f"{ME}/cards", "get"), (f"{ME}/kyc-url", "post")):
        security = document["paths"][path][method]["security"]
        assert security == [{"ApiKey": [], "MorBearer": []}], path
    assert document["paths"][TOKEN]["post"]["security"] == [{"ApiKey": []}]
