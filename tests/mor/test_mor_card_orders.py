"""Batch card ordering for a MOR merchant: each order through the ordinary card order, each
answered on its own, the batch idempotent as a whole."""

from __future__ import annotations

import httpx
from fastapi import FastAPI
from sqlalchemy import func, select

from finplat.cards.models import Card
from finplat.mor.access import PREFIX
from finplat.mor.cards.service import MAX_BATCH
from tests.cards.steps import approved_card_user, order_body
from tests.conftest import Tenant, TenantFactory
from tests.mor.card_steps import batch
from tests.onboarding import create_user


async def _card_count(app: FastAPI, company_id: int) -> int:
    async with app.state.session_factory() as session:
        stmt = select(func.count()).select_from(Card).where(Card.company_id == company_id)
        return int((await session.execute(stmt)).scalar_one())


async def test_a_batch_orders_each_card_assigned_to_its_user(mor_tenant: Tenant) -> None:
    api = mor_tenant.client
    first, second = await approved_card_user(api), await approved_card_user(api)
    response = await batch(api, [await order_body(api, first), await order_body(api, second)])
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["Created"], body["Refused"]) == (2, 0)
    assert [i["Index"] for i in body["Items"]] == [0, 1]
    assert [i["Card"]["AssignedUserId"] for i in body["Items"]] == [first["Id"], second["Id"]]
    assert all(i["Card"]["cardNo"] == "" for i in body["Items"])
    assert all(i["Error"] is None for i in body["Items"])


async def test_a_refused_order_reports_its_own_code_and_the_others_are_made(
    mor_tenant: Tenant,
) -> None:
    api = mor_tenant.client
    holder = await approved_card_user(api)
    unverified = await create_user(api)
    good = await order_body(api, holder)
    response = await batch(api, [{**good, "UserId": unverified["Id"]}, good])
    assert response.status_code == 200, response.text
    refused, created = response.json()["Items"]
    assert refused["Result"] == "REFUSED"
    assert refused["Card"] is None
    assert refused["Error"]["Code"] == "KYC_NOT_APPROVED"
    assert refused["Error"]["Status"] == 409
    assert created["Result"] == "CREATED"


async def test_a_batch_retried_with_the_same_key_creates_each_card_once(
    app: FastAPI, mor_tenant: Tenant
) -> None:
    api = mor_tenant.client
    user = await approved_card_user(api)
    orders = [await order_body(api, user), await order_body(api, user)]
    first = await batch(api, orders, key="batch-1")
    again = await batch(api, orders, key="batch-1")
    assert first.status_code == again.status_code == 200
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.json() == first.json()
    assert await _card_count(app, mor_tenant.company_id) == 2


async def test_a_batch_above_the_maximum_is_400(mor_tenant: Tenant) -> None:
    api = mor_tenant.client
    user = await approved_card_user(api)
    order = await order_body(api, user)
    response = await batch(api, [order] * (MAX_BATCH + 1))
    assert response.status_code == 400, response.text
    assert response.json()["Code"] == "VALIDATION_ERROR"


async def test_an_empty_batch_is_400(mor_tenant: Tenant) -> None:
    response = await mor_tenant.client.post(f"{PREFIX}/cards/batch", json={"Cards": []})
    assert response.status_code == 400


async def test_another_companys_user_is_refused_as_unknown_in_a_batch(
    mor_tenant: Tenant, make_tenant: TenantFactory
) -> None:
    other = await make_tenant("Other MOR", mor=True)
    api: httpx.AsyncClient = mor_tenant.client
    foreign = await approved_card_user(other.client)
    order = await order_body(other.client, foreign)
    response = await batch(api, [order])
    assert response.status_code == 200, response.text
    assert response.json()["Items"][0]["Error"]["Code"] == "USER_NOT_FOUND"


async def test_the_batch_path_is_no_card_id(mor_tenant: Tenant) -> None:
    response = await mor_tenant.client.get(f"{PREFIX}/cards/batch")
    assert response.status_code == 405, response.text
    assert response.headers["Allow"] == "POST"
