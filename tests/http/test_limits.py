"""Request limits: body size (413), page size (400), per-API-key rate limiting (429)."""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI

from finplat.app import create_app
from finplat.config import Settings
from finplat.http.rate_limit import ApiKeyRateLimiter
from finplat.providers.registry import build_providers
from tests.conftest import Tenant, TenantFactory
from tests.factories import user_payload

REDIS_URL = "redis://127.0.0.1:6379"


def assert_error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert (body["Status"], body["Code"]) == (status, code)


async def test_body_over_the_limit_is_413_before_it_is_read(app: FastAPI, tenant: Tenant) -> None:
    limit = app.state.settings.max_body_bytes
    response = await tenant.client.post(
        "/api/v2/users",
        content=b"{" + b" " * limit + b"}",
        headers={"content-type": "application/json"},
    )
    assert_error(response, 413, "PAYLOAD_TOO_LARGE")


async def test_chunked_body_over_the_limit_is_413(app: FastAPI, tenant: Tenant) -> None:
    limit = app.state.settings.max_body_bytes

    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"Email": "'
        for _ in range(limit // 65536 + 2):
            yield b"a" * 65536
        yield b'"}'

    response = await tenant.client.post(
        "/api/v2/users", content=chunks(), headers={"content-type": "application/json"}
    )
    assert_error(response, 413, "PAYLOAD_TOO_LARGE")


async def test_file_upload_over_the_json_limit_is_read(app: FastAPI, tenant: Tenant) -> None:
    padding = b"x" * (app.state.settings.max_body_bytes + 1)
    response = await tenant.client.post(
        "/api/v2/users/987654321/kyc/bankprov/documents",
        files={"Files": ("scan.pdf", b"%PDF-1.7\n" + padding)},
    )
    # Read and examined (the bytes are no real PDF), not refused for its size.
    assert_error(response, 400, "INVALID_DOCUMENT")


async def test_file_upload_over_the_upload_limit_is_413(app: FastAPI, tenant: Tenant) -> None:
    padding = b"x" * (app.state.settings.max_upload_bytes + 1)
    response = await tenant.client.post(
        "/api/v2/users/987654321/kyc/bankprov/documents",
        files={"Files": ("scan.pdf", b"%PDF-1.7\n" + padding)},
    )
    assert_error(response, 413, "PAYLOAD_TOO_LARGE")


async def test_body_under_the_limit_is_accepted(tenant: Tenant) -> None:
    response = await tenant.client.post("/api/v2/users", json=user_payload())
    assert response.status_code == 201


async def test_page_size_above_the_maximum_is_400(tenant: Tenant) -> None:
    response = await tenant.client.get("/api/v2/users", params={"pageSize": 1000})
    assert_error(response, 400, "VALIDATION_ERROR")


def limited(app: FastAPI, limit: str, redis_url: str | None = None) -> None:
    app.state.rate_limiter = ApiKeyRateLimiter(limit, redis_url=redis_url)


async def test_requests_over_the_rate_limit_are_429_with_retry_after(
    app: FastAPI, tenant: Tenant
) -> None:
    limited(app, "3/minute")
    for _ in range(3):
        assert (await tenant.client.get("/api/v2/tiers")).status_code == 200
    response = await tenant.client.get("/api/v2/tiers")
    assert_error(response, 429, "RATE_LIMITED")
    assert 1 <= int(response.headers["retry-after"]) <= 60


async def test_rate_limit_is_per_api_key(app: FastAPI, make_tenant: TenantFactory) -> None:
    limited(app, "2/minute")
    a, b = await make_tenant("A"), await make_tenant("B")
    for _ in range(2):
        await a.client.get("/api/v2/tiers")
    assert (await a.client.get("/api/v2/tiers")).status_code == 429
    assert (await b.client.get("/api/v2/tiers")).status_code == 200


async def test_rate_limited_requests_cause_no_effect(app: FastAPI, tenant: Tenant) -> None:
    limited(app, "1/minute")
    await tenant.client.get("/api/v2/tiers")
    refused = await tenant.client.post("/api/v2/users", json=user_payload(ExternalUserId="x-rl"))
    assert refused.status_code == 429
    limited(app, "100/second")
    listing = await tenant.client.get("/api/v2/users", params={"externalUserId": "x-rl"})
    assert listing.json()["Items"] == []


def redis_available() -> bool:
    """A raw PING: the test needs no Redis client of its own."""
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1) as conn:
            conn.sendall(b"*1\r\n$4\r\nPING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@pytest.mark.skipif(not redis_available(), reason="Redis is not running on 127.0.0.1:6379")
async def test_processes_sharing_redis_share_one_budget(
    settings: Settings, app: FastAPI, tenant: Tenant
) -> None:
    # Two app instances stand for two API processes; a fresh limit string keeps this run's
    # counters apart from earlier runs in the same Redis.
    limit = f"4/{60 + uuid.uuid4().int % 1000}second"
    second = create_app(settings)
    second.state.session_factory = app.state.session_factory
    second.state.providers = build_providers(settings, app.state.session_factory)
    limited(app, limit, REDIS_URL)
    limited(second, limit, REDIS_URL)
    other = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=second),
        base_url="http://finplat.test",
        headers={"x-api-key": tenant.api_key},
    )
    async with other:
        statuses = []
        for client in (tenant.client, other, tenant.client, other, tenant.client, other):
            statuses.append((await client.get("/api/v2/tiers")).status_code)
            await asyncio.sleep(0)
    assert statuses == [200, 200, 200, 200, 429, 429]
