"""Authentication rule 5: every public MOR endpoint requires that the key's company is enabled
for MOR, and the operator switches it with `finplat company set-mor`."""

from __future__ import annotations

import json
import re

import httpx
from fastapi import FastAPI
from fastapi.routing import APIRoute

from finplat.app import create_app
from finplat.config import Settings
from finplat.http.rate_limit import ApiKeyRateLimiter
from finplat.http.routing import served_routes
from finplat.mor.access import PREFIX
from tests.conftest import Tenant, TenantFactory
from tests.databases import scratch_database
from tests.processes import environment, run_cli


def _mor_operations(app: FastAPI) -> list[tuple[str, str]]:
    return sorted(
        (method, route.path_format)
        for route in served_routes(app.routes)
        if isinstance(route, APIRoute) and route.path_format.startswith(PREFIX)
        for method in route.methods or ()
    )


async def test_every_mor_route_answers_403_to_a_company_not_enabled_for_mor(
    app: FastAPI, api: httpx.AsyncClient
) -> None:
    app.state.rate_limiter = ApiKeyRateLimiter("100000/second")
    operations = _mor_operations(app)
    assert operations
    for method, path in operations:
        concrete = re.sub(r"\{[^}]+\}", "1", path)
        # A body that is not even valid: the company is refused before the body is looked at.
        response = await api.request(method, concrete, json={"Unexpected": True})
        assert response.status_code == 403, (method, path, response.text)
        body = response.json()
        assert body["Code"] == "MOR_NOT_ENABLED", (method, path)
        assert body["Message"]


async def test_every_mor_route_documents_its_403(app: FastAPI) -> None:
    document = app.openapi()
    for method, path in _mor_operations(app):
        operation = document["paths"][path][method.lower()]
        assert "403" in operation["responses"], (method, path)


async def test_a_mor_company_discovers_its_tiers_and_their_card_products(
    mor_tenant: Tenant,
) -> None:
    tiers = await mor_tenant.client.get(f"{PREFIX}/tiers")
    assert tiers.status_code == 200, tiers.text
    tier_id = tiers.json()["Tiers"][0]["Id"]
    products = await mor_tenant.client.get(f"{PREFIX}/tiers/{tier_id}/card-products")
    assert products.status_code == 200, products.text
    assert products.json()["TierId"] == tier_id
    assert products.json()["CardProducts"]


async def test_another_companys_tier_is_not_found_behind_the_mor_gate(
    mor_tenant: Tenant, make_tenant: TenantFactory
) -> None:
    other = await make_tenant("Other MOR", mor=True)
    tier_id = (await other.client.get(f"{PREFIX}/tiers")).json()["Tiers"][0]["Id"]
    response = await mor_tenant.client.get(f"{PREFIX}/tiers/{tier_id}/card-products")
    assert response.status_code == 404


async def test_finplat_company_set_mor_opens_and_closes_the_mor_routes_at_once() -> None:
    async with scratch_database("setmor") as url:
        env = environment(url)
        created = json.loads((await run_cli(env, "company", "create", "--name", "M", "--json"))[1])
        assert created["IsMor"] is False
        app = create_app(Settings(database_url=url, sandbox=True))
        try:
            async with httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app),
                base_url="http://finplat.test",
                headers={"x-api-key": created["ApiKey"]},
            ) as client:
                assert (await client.get(f"{PREFIX}/tiers")).status_code == 403
                company = str(created["CompanyId"])
                _, out, _ = await run_cli(
                    env,
                    "company",
                    "set-mor",
                    "--company-id",
                    company,
                    "--enabled",
                    "true",
                    "--json",
                )
                assert json.loads(out) == {"CompanyId": created["CompanyId"], "IsMor": True}
                assert (await client.get(f"{PREFIX}/tiers")).status_code == 200
                await run_cli(
                    env, "company", "set-mor", "--company-id", company, "--enabled", "false"
                )
                assert (await client.get(f"{PREFIX}/tiers")).status_code == 403
        finally:
            await app.state.engine.dispose()


async def test_finplat_company_set_mor_refuses_what_is_not_true_or_false() -> None:
    async with scratch_database("setmorbad") as url:
        env = environment(url)
        code, _, err = await run_cli(
            env, "company", "set-mor", "--company-id", "1", "--enabled", "yes", check=False
        )
        assert code == 2
        assert "true or false" in err
