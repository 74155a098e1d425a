"""Operator keys: every company on the admin routes, nothing elsewhere; company keys on their
own company only."""

from __future__ import annotations

import json

import httpx
import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.app import create_app
from finplat.auth.models import OperatorKey
from finplat.config import Settings
from finplat.kit.clock import utcnow
from tests.conftest import TenantFactory
from tests.databases import scratch_database
from tests.processes import environment, run_cli

COMPANY_SETTINGS = "/api/v2/admin/vouchers/settings/company"
GLOBAL_SETTINGS = "/api/v2/admin/vouchers/settings/global"


async def test_an_operator_key_reads_any_company_named_by_company_id(
    operator: httpx.AsyncClient, make_tenant: TenantFactory
) -> None:
    first, second = await make_tenant("First"), await make_tenant("Second")
    for tenant in (first, second):
        response = await operator.get(COMPANY_SETTINGS, params={"companyId": tenant.company_id})
        assert response.status_code == 200, response.text
        assert response.json()["EffectiveEnabled"] is True


async def test_an_operator_key_needs_company_id_for_a_company_resource(
    operator: httpx.AsyncClient,
) -> None:
    response = await operator.get(COMPANY_SETTINGS)
    assert response.status_code == 400
    assert response.json()["Code"] == "COMPANY_ID_REQUIRED"


async def test_an_operator_key_naming_an_unknown_company_is_404(
    operator: httpx.AsyncClient,
) -> None:
    response = await operator.get(COMPANY_SETTINGS, params={"companyId": 987654321})
    assert response.status_code == 404
    assert response.json()["Code"] == "COMPANY_NOT_FOUND"


async def test_a_company_key_reads_its_own_company_with_or_without_company_id(
    make_tenant: TenantFactory,
) -> None:
    tenant = await make_tenant()
    for params in ({}, {"companyId": tenant.company_id}):
        response = await tenant.client.get(COMPANY_SETTINGS, params=params)
        assert response.status_code == 200, response.text


async def test_a_company_key_naming_another_company_is_404_as_an_unknown_one(
    make_tenant: TenantFactory,
) -> None:
    tenant, other = await make_tenant("Mine"), await make_tenant("Theirs")
    foreign = await tenant.client.get(COMPANY_SETTINGS, params={"companyId": other.company_id})
    unknown = await tenant.client.get(COMPANY_SETTINGS, params={"companyId": 987654321})
    assert foreign.status_code == unknown.status_code == 404
    assert foreign.json()["Code"] == unknown.json()["Code"] == "COMPANY_NOT_FOUND"
    changed = await tenant.client.put(
        COMPANY_SETTINGS, params={"companyId": other.company_id}, json={"Enabled": False}
    )
    assert changed.status_code == 404
    theirs = await other.client.get(COMPANY_SETTINGS)
    assert theirs.json()["CompanyEnabled"] is True


async def test_an_operator_key_is_unknown_outside_the_admin_routes(
    operator: httpx.AsyncClient,
) -> None:
    response = await operator.get("/api/v2/tiers")
    assert response.status_code == 401
    assert response.json()["Code"] == "UNAUTHORIZED"


async def test_a_revoked_operator_key_is_401(
    operator: httpx.AsyncClient, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    async with session_factory() as session:
        await session.execute(update(OperatorKey).values(revoked_at=utcnow()))
        await session.commit()
    response = await operator.get(GLOBAL_SETTINGS)
    assert response.status_code == 401


async def test_an_unknown_operator_looking_key_is_401(anonymous: httpx.AsyncClient) -> None:
    response = await anonymous.get(GLOBAL_SETTINGS, headers={"x-api-key": "fp_op_" + "x" * 43})
    assert response.status_code == 401
    assert response.json()["Code"] == "UNAUTHORIZED"


async def test_admin_routes_without_a_key_are_401(anonymous: httpx.AsyncClient) -> None:
    response = await anonymous.get(GLOBAL_SETTINGS)
    assert response.status_code == 401


async def test_finplat_operator_create_key_prints_a_key_that_works_on_admin_routes() -> None:
    async with scratch_database("operator") as url:
        _, out, _ = await run_cli(environment(url), "operator", "create-key", "--json")
        printed = json.loads(out.strip().splitlines()[-1])
        assert set(printed) == {"OperatorKeyId", "ApiKey"}
        assert isinstance(printed["OperatorKeyId"], int)
        app = create_app(Settings(database_url=url))
        try:
            async with httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app),
                base_url="http://finplat.test",
                headers={"x-api-key": printed["ApiKey"]},
            ) as client:
                response = await client.get(GLOBAL_SETTINGS)
                assert response.status_code == 200, response.text
        finally:
            await app.state.engine.dispose()


@pytest.mark.parametrize("path", [GLOBAL_SETTINGS, COMPANY_SETTINGS])
async def test_operator_requests_are_answered_in_the_standard_error_body_on_bad_input(
    operator: httpx.AsyncClient, path: str
) -> None:
    response = await operator.put(path, params={"companyId": 1}, json={"Bogus": 1})
    assert response.status_code in (400, 404)
    assert set(response.json()) >= {"Code", "Message"}
