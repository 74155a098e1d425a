"""Failed authentication is throttled per client address, before any database work; valid
keys are never throttled."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.auth.failure_throttle import FailedAuthThrottle
from finplat.companies import service as companies
from finplat.http.sliding_window import SlidingWindowCounter
from tests.auth.test_authentication import assert_unauthorized
from tests.conftest import Tenant

LIMIT = 5
BAD_KEY = "fp_test_" + "x" * 43

Client = Callable[..., httpx.AsyncClient]


@pytest.fixture
async def from_address(app: FastAPI) -> AsyncIterator[Client]:
    """Clients whose requests come from a given address, with a throttle of `LIMIT`."""
    app.state.auth_throttle = FailedAuthThrottle(f"{LIMIT}/minute")
    clients: list[httpx.AsyncClient] = []

    def make(address: str, api_key: str | None = None) -> httpx.AsyncClient:
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app, client=(address, 40000)),
            base_url="http://finplat.test",
            headers={"x-api-key": api_key} if api_key else {},
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()


def assert_throttled(response: httpx.Response) -> None:
    assert response.status_code == 429, response.text
    assert response.json()["Code"] == "AUTHENTICATION_THROTTLED"
    assert int(response.headers["Retry-After"]) >= 1


async def _spend_failures(client: httpx.AsyncClient) -> None:
    for _ in range(LIMIT):
        assert_unauthorized(await client.get("/api/v2/tiers", headers={"x-api-key": BAD_KEY}))


async def test_bad_keys_past_the_limit_are_answered_429(from_address: Client) -> None:
    prober = from_address("203.0.113.7")
    await _spend_failures(prober)
    assert_throttled(await prober.get("/api/v2/tiers", headers={"x-api-key": BAD_KEY}))


async def test_missing_keys_count_as_failures(from_address: Client) -> None:
    prober = from_address("203.0.113.8")
    for _ in range(LIMIT):
        assert_unauthorized(await prober.get("/api/v2/tiers"))
    assert_throttled(await prober.get("/api/v2/tiers"))


async def test_a_throttled_address_is_refused_without_touching_the_database(
    app: FastAPI, from_address: Client
) -> None:
    prober = from_address("203.0.113.9")
    await _spend_failures(prober)

    def no_database() -> AsyncSession:
        raise AssertionError("the database was touched")

    real_factory = app.state.session_factory
    app.state.session_factory = no_database
    try:
        assert_throttled(await prober.get("/api/v2/tiers", headers={"x-api-key": BAD_KEY}))
    finally:
        app.state.session_factory = real_factory


async def test_a_known_valid_key_from_a_throttled_address_is_served(
    tenant: Tenant, from_address: Client
) -> None:
    partner = from_address("198.51.100.20", tenant.api_key)
    assert (await partner.get("/api/v2/tiers")).status_code == 200
    await _spend_failures(from_address("198.51.100.20"))
    assert (await partner.get("/api/v2/tiers")).status_code == 200


async def test_another_address_is_not_throttled(tenant: Tenant, from_address: Client) -> None:
    await _spend_failures(from_address("203.0.113.10"))
    assert_unauthorized(
        await from_address("203.0.113.11").get("/api/v2/tiers", headers={"x-api-key": BAD_KEY})
    )
    fresh = from_address("203.0.113.12", tenant.api_key)
    assert (await fresh.get("/api/v2/tiers")).status_code == 200


async def test_valid_requests_do_not_count_as_failures(
    tenant: Tenant, from_address: Client
) -> None:
    partner = from_address("198.51.100.21", tenant.api_key)
    for _ in range(3 * LIMIT):
        assert (await partner.get("/api/v2/tiers")).status_code == 200
    await _spend_failures(from_address("198.51.100.21"))


async def test_a_revoked_key_counts_as_a_failure(
    tenant: Tenant,
    from_address: Client,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    client = from_address("203.0.113.13", tenant.api_key)
    assert (await client.get("/api/v2/tiers")).status_code == 200
    async with session_factory() as session:
        await companies.revoke_api_key(
            session, company_id=tenant.company_id, key_id=tenant.api_key_id
        )
        await session.commit()
    for _ in range(LIMIT):
        assert_unauthorized(await client.get("/api/v2/tiers"))
    assert_throttled(await client.get("/api/v2/tiers"))


def test_peeking_at_a_window_counts_nothing() -> None:
    window = SlidingWindowCounter(2, 60)
    for _ in range(10):
        assert window.wait("address", 1000.0) is None
    assert window.hit("address", 1000.0) is None
    assert window.hit("address", 1000.0) is None
    assert window.wait("address", 1000.0) is not None
