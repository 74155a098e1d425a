"""Parent company provisioning: a MOR parent creates child companies (separate tenants) and
funds them from its wallet, atomically and once per key."""

from __future__ import annotations

from decimal import Decimal

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.ledger.verification import verify
from finplat.mor.access import PREFIX
from tests.conftest import Tenant, TenantFactory
from tests.mor.money_steps import available, client_for, create_child, fund, fund_child


async def test_a_parent_creates_a_mor_child_with_its_own_key_and_secret(
    app: FastAPI, mor_tenant: Tenant
) -> None:
    child = await create_child(mor_tenant, "Retail EU")
    assert child["Name"] == "Retail EU"
    assert child["IsMor"] is True
    assert child["ParentCompanyId"] == mor_tenant.company_id
    assert child["ApiKey"].startswith("fp_test_")
    assert child["WebhookSecret"].startswith("whsec_")
    async with client_for(app, child["ApiKey"]) as own:
        configuration = (await own.get("/api/v2/company/configuration")).json()
        assert configuration["CompanyId"] == child["Id"]
        assert configuration["IsMor"] is True
        assert (await own.get(f"{PREFIX}/tiers")).status_code == 200


async def test_a_retried_creation_answers_the_same_child_without_its_secrets(
    mor_tenant: Tenant,
) -> None:
    first = await create_child(mor_tenant, key="child-1")
    again = await mor_tenant.client.post(
        f"{PREFIX}/children", json={"Name": "Child Ltd"}, headers={"Idempotency-Key": "child-1"}
    )
    assert again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["Id"] == first["Id"]
    assert again.json()["ApiKey"] is None
    assert again.json()["WebhookSecret"] is None
    listed = (await mor_tenant.client.get(f"{PREFIX}/children")).json()["Items"]
    assert [c["Id"] for c in listed] == [first["Id"]]


async def test_a_parent_lists_and_reads_only_its_own_children(
    mor_tenant: Tenant, make_tenant: TenantFactory
) -> None:
    other = await make_tenant("Other parent", mor=True)
    mine = [await create_child(mor_tenant, f"Mine {i}") for i in range(2)]
    theirs = await create_child(other, "Theirs")
    listed = (await mor_tenant.client.get(f"{PREFIX}/children")).json()["Items"]
    assert [c["Id"] for c in listed] == [mine[1]["Id"], mine[0]["Id"]]
    read = await mor_tenant.client.get(f"{PREFIX}/children/{mine[0]['Id']}")
    assert read.status_code == 200
    assert "ApiKey" not in read.json()
    foreign = await mor_tenant.client.get(f"{PREFIX}/children/{theirs['Id']}")
    assert foreign.status_code == 404
    assert foreign.json()["Code"] == "CHILD_COMPANY_NOT_FOUND"


async def test_a_child_cannot_create_children(app: FastAPI, mor_tenant: Tenant) -> None:
    child = await create_child(mor_tenant)
    async with client_for(app, child["ApiKey"]) as own:
        response = await own.post(f"{PREFIX}/children", json={"Name": "Grandchild"})
    assert response.status_code == 409
    assert response.json()["Code"] == "MOR_CHILD_CANNOT_PROVISION"


async def test_a_blank_name_is_refused(mor_tenant: Tenant) -> None:
    response = await mor_tenant.client.post(f"{PREFIX}/children", json={"Name": "   "})
    assert response.status_code == 400
    assert "Name" in response.json()["ValidationErrors"]


async def test_funding_a_child_moves_money_from_the_parent_wallet_to_the_child_wallet(
    app: FastAPI, mor_tenant: Tenant, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    await fund(mor_tenant.client, 500)
    child = await create_child(mor_tenant)
    response = await fund_child(mor_tenant, child["Id"], "120.75", key="fund-1")
    assert response.status_code == 201, response.text
    assert response.json()["Amount"] == 120.75
    assert response.json()["Status"] == "COMPLETED"
    assert await available(mor_tenant.client) == Decimal("379.25")
    async with client_for(app, child["ApiKey"]) as own:
        assert await available(own) == Decimal("120.75")
    async with session_factory() as session:
        assert (await verify(session)).ok


async def test_a_retried_funding_moves_money_once(app: FastAPI, mor_tenant: Tenant) -> None:
    await fund(mor_tenant.client, 100)
    child = await create_child(mor_tenant)
    first = await fund_child(mor_tenant, child["Id"], 40, key="fund-once")
    again = await fund_child(mor_tenant, child["Id"], 40, key="fund-once")
    assert again.status_code == 201
    assert again.json() == first.json()
    assert await available(mor_tenant.client) == Decimal(60)
    async with client_for(app, child["ApiKey"]) as own:
        assert await available(own) == Decimal(40)
    fundings = (await mor_tenant.client.get(f"{PREFIX}/children/{child['Id']}/fundings")).json()
    assert [f["Id"] for f in fundings["Items"]] == [first.json()["Id"]]


async def test_a_funding_beyond_the_parent_wallet_is_refused_and_moves_nothing(
    app: FastAPI, mor_tenant: Tenant
) -> None:
    await fund(mor_tenant.client, 50)
    child = await create_child(mor_tenant)
    response = await fund_child(mor_tenant, child["Id"], "50.01")
    assert response.status_code == 409
    assert response.json()["Code"] == "INSUFFICIENT_FUNDS"
    assert await available(mor_tenant.client) == Decimal(50)
    async with client_for(app, child["ApiKey"]) as own:
        assert (await own.get(f"{PREFIX}/wallets/USD")).status_code == 404
    fundings = (await mor_tenant.client.get(f"{PREFIX}/children/{child['Id']}/fundings")).json()
    assert fundings["Items"] == []


async def test_a_parent_cannot_fund_another_parents_child(
    mor_tenant: Tenant, make_tenant: TenantFactory
) -> None:
    await fund(mor_tenant.client, 50)
    other = await make_tenant("Other parent", mor=True)
    theirs = await create_child(other)
    response = await fund_child(mor_tenant, theirs["Id"], 10)
    assert response.status_code == 404
    assert response.json()["Code"] == "CHILD_COMPANY_NOT_FOUND"
    assert await available(mor_tenant.client) == Decimal(50)


async def test_an_amount_with_more_decimals_than_its_currency_is_refused(
    mor_tenant: Tenant,
) -> None:
    child = await create_child(mor_tenant)
    response = await fund_child(mor_tenant, child["Id"], "1.001")
    assert response.status_code == 400


async def test_a_child_never_sees_its_sibling_nor_its_parent(
    app: FastAPI, mor_tenant: Tenant
) -> None:
    await fund(mor_tenant.client, 100)
    first = await create_child(mor_tenant, "First child")
    second = await create_child(mor_tenant, "Second child")
    assert (await fund_child(mor_tenant, second["Id"], 25)).status_code == 201
    async with client_for(app, first["ApiKey"]) as own:
        assert (await own.get(f"{PREFIX}/children")).json()["Items"] == []
        for path in (
            f"{PREFIX}/children/{second['Id']}",
            f"{PREFIX}/children/{second['Id']}/fundings",
            f"{PREFIX}/children/{mor_tenant.company_id}",
        ):
            response = await own.get(path)
            assert response.status_code == 404, path
        assert (await fund_child_as(own, second["Id"])).status_code == 404
        assert (await own.get(f"{PREFIX}/transactions")).json()["Items"] == []
        assert (await own.get(f"{PREFIX}/wallets")).json()["Wallets"] == []


async def fund_child_as(client: httpx.AsyncClient, child_id: int) -> httpx.Response:
    return await client.post(
        f"{PREFIX}/children/{child_id}/fundings", json={"Amount": 1, "Currency": "USD"}
    )


async def test_a_funding_is_announced_to_the_parent_and_to_the_child(
    app: FastAPI, mor_tenant: Tenant
) -> None:
    await fund(mor_tenant.client, 30)
    child = await create_child(mor_tenant)
    funding = (await fund_child(mor_tenant, child["Id"], 12)).json()
    sent = await mor_tenant.client.get("/api/v2/events", params={"type": "mor.child.funded"})
    [event] = sent.json()["Items"]
    assert event["Data"]["fundingId"] == funding["Id"]
    async with client_for(app, child["ApiKey"]) as own:
        got = await own.get("/api/v2/events", params={"type": "mor.funding.received"})
        [received] = got.json()["Items"]
        assert received["Data"]["amount"] == 12
        assert (await own.get("/api/v2/events", params={"type": "mor.child.funded"})).json()[
            "Items"
        ] == []
