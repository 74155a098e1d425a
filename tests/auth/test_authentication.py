"""Every /api/v2 route requires a valid, unrevoked x-api-key."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.auth import repository as api_keys
from finplat.auth.models import ApiKey
from finplat.companies import service as companies
from finplat.db.unit_of_work import unit_of_work
from tests.conftest import Tenant, TenantFactory
from tests.databases import backend
from tests.factories import user_payload
from tests.isolated import isolated

PROTECTED = [
    ("GET", "/api/v2/tiers"),
    ("GET", "/api/v2/tiers/card-tier/1"),
    ("GET", "/api/v2/users"),
    ("GET", "/api/v2/users/1"),
    ("POST", "/api/v2/users"),
    ("POST", "/api/v2/users/1/tier"),
]


def assert_unauthorized(response: httpx.Response) -> None:
    assert response.status_code == 401, response.text
    body = response.json()
    assert body["Code"] == "UNAUTHORIZED"
    assert body["Status"] == 401
    assert set(body) == {"Message", "Code", "Status", "ValidationErrors", "Details"}


@pytest.mark.parametrize(("method", "path"), PROTECTED)
async def test_missing_api_key_is_unauthorized(
    anonymous: httpx.AsyncClient, method: str, path: str
) -> None:
    assert_unauthorized(await anonymous.request(method, path, json={}))


@pytest.mark.parametrize(("method", "path"), PROTECTED)
async def test_unknown_api_key_is_unauthorized(
    anonymous: httpx.AsyncClient, method: str, path: str
) -> None:
    response = await anonymous.request(
        method, path, json={}, headers={"x-api-key": "fp_test_" + "x" * 43}
    )
    assert_unauthorized(response)


async def test_empty_api_key_is_unauthorized(anonymous: httpx.AsyncClient) -> None:
    assert_unauthorized(await anonymous.get("/api/v2/tiers", headers={"x-api-key": ""}))


async def test_authentication_is_checked_before_the_body(anonymous: httpx.AsyncClient) -> None:
    response = await anonymous.post(
        "/api/v2/users", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert_unauthorized(response)


async def test_valid_api_key_is_accepted(api: httpx.AsyncClient) -> None:
    assert (await api.get("/api/v2/tiers")).status_code == 200


async def test_revoked_api_key_is_unauthorized(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    assert (await tenant.client.get("/api/v2/tiers")).status_code == 200
    async with session_factory() as session:
        await companies.revoke_api_key(
            session, company_id=tenant.company_id, key_id=tenant.api_key_id
        )
        await session.commit()
    assert_unauthorized(await tenant.client.get("/api/v2/tiers"))


async def test_rotated_key_works_alongside_the_old_one_until_revoked(
    tenant: Tenant, anonymous: httpx.AsyncClient, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    async with session_factory() as session:
        new, revoked = await companies.rotate_api_key(
            session, company_id=tenant.company_id, sandbox=True, revoke_others=False
        )
        await session.commit()
    assert revoked == 0
    assert (
        await anonymous.get("/api/v2/tiers", headers={"x-api-key": new.api_key})
    ).status_code == 200
    assert (await tenant.client.get("/api/v2/tiers")).status_code == 200
    async with session_factory() as session:
        await companies.rotate_api_key(
            session, company_id=tenant.company_id, sandbox=True, revoke_others=True
        )
        await session.commit()
    assert_unauthorized(await tenant.client.get("/api/v2/tiers"))


@pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")
async def test_of_two_overlapping_rotations_revoking_the_others_only_the_last_key_stays() -> None:
    async with isolated("rotation", run_background_jobs=False) as env:
        factory = env.app.state.session_factory

        async def rotate() -> int:
            async with unit_of_work(factory) as session:
                issued, _ = await companies.rotate_api_key(
                    session, company_id=env.company_id, sandbox=True, revoke_others=True
                )
                return issued.key_id

        async with unit_of_work(factory) as session:
            await companies.rotate_api_key(
                session, company_id=env.company_id, sandbox=True, revoke_others=True
            )
            second = asyncio.create_task(rotate())
            await asyncio.sleep(0.3)  # the second rotation runs while the first is open
        last = await second
        async with factory() as session:
            keys = await api_keys.list_for_company(session, env.company_id)
        assert [k.id for k in keys if k.revoked_at is None] == [last]


async def test_keys_are_stored_only_as_a_hash(tenant: Tenant, session: AsyncSession) -> None:
    rows = (
        await session.execute(select(ApiKey).where(ApiKey.company_id == tenant.company_id))
    ).scalars()
    for row in rows:
        assert tenant.api_key not in (row.key_hash, row.display_prefix)
        assert len(row.key_hash) == 64
        assert tenant.api_key.startswith(row.display_prefix)


async def test_keys_are_high_entropy_and_prefixed(make_tenant: TenantFactory) -> None:
    keys = {(await make_tenant(f"C{i}")).api_key for i in range(5)}
    assert len(keys) == 5
    for key in keys:
        assert key.startswith("fp_test_")
        assert len(key) >= 8 + 43


async def test_company_b_never_reads_company_a_users(make_tenant: TenantFactory) -> None:
    a, b = await make_tenant("A"), await make_tenant("B")
    user = (await a.client.post("/api/v2/users", json=user_payload())).json()
    response = await b.client.get(f"/api/v2/users/{user['Id']}")
    assert response.status_code == 404
    assert response.json()["Code"] == "USER_NOT_FOUND"
    assert (await b.client.get("/api/v2/users")).json()["Items"] == []
    by_external = await b.client.get(
        "/api/v2/users", params={"externalUserId": user["ExternalUserId"]}
    )
    assert by_external.json()["Items"] == []
    tier = await b.client.post(f"/api/v2/users/{user['Id']}/tier", json={"TierId": user["TierId"]})
    assert tier.status_code == 404
