"""Load requests: a card's assignee asks, the merchant approves (the card funded once from the
merchant's wallet) or declines."""

from __future__ import annotations

from decimal import Decimal

from fastapi import FastAPI
from sqlalchemy import select

from finplat.cards.funding.models import CardFunding
from finplat.events.models import Event
from finplat.mor.access import PREFIX
from tests.cards.funding.steps import master_available
from tests.cards.steps import approved_card_user
from tests.conftest import Tenant, TenantFactory
from tests.mor.card_steps import (
    approve,
    ask_load,
    balance,
    load_request,
    mor_card,
    unassign,
)


async def _fundings(app: FastAPI, card_id: int) -> list[CardFunding]:
    async with app.state.session_factory() as session:
        stmt = select(CardFunding).where(CardFunding.card_id == card_id)
        return list((await session.execute(stmt)).scalars())


async def test_a_load_request_waits_pending(mor_tenant: Tenant) -> None:
    api = mor_tenant.client
    card = await mor_card(api)
    response = await ask_load(api, card, 25)
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["Status"] == "PENDING"
    assert body["Amount"] == 25
    assert body["Note"] == "Team lunch"
    assert body["UserId"] == card["AssignedUserId"]
    assert await balance(api, card["Id"]) == 0


async def test_an_approved_load_request_funds_the_card_once(
    app: FastAPI, mor_tenant: Tenant
) -> None:
    api = mor_tenant.client
    card = await mor_card(api)
    before = await master_available(api)
    request_id = await load_request(api, card, 30)
    first = await approve(api, request_id)
    again = await approve(api, request_id)
    assert first.status_code == again.status_code == 200, first.text
    assert first.json()["Status"] == again.json()["Status"] == "FUNDED"
    assert first.json()["FundingId"] == again.json()["FundingId"]
    assert await balance(api, card["Id"]) == 30
    assert await master_available(api) == before - 30
    assert len(await _fundings(app, card["Id"])) == 1


async def test_a_declined_load_request_moves_no_money(mor_tenant: Tenant) -> None:
    api = mor_tenant.client
    card = await mor_card(api)
    before = await master_available(api)
    request_id = await load_request(api, card, 30)
    response = await api.post(
        f"{PREFIX}/load-requests/{request_id}/decline", json={"Reason": "Over budget"}
    )
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "DECLINED"
    assert response.json()["DeclineReason"] == "Over budget"
    refused = await approve(api, request_id)
    assert refused.status_code == 409
    assert refused.json()["Code"] == "MOR_LOAD_REQUEST_NOT_PENDING"
    assert await master_available(api) == before
    assert await balance(api, card["Id"]) == 0


async def test_a_funded_request_cannot_be_declined(mor_tenant: Tenant) -> None:
    api = mor_tenant.client
    card = await mor_card(api)
    request_id = await load_request(api, card, 10)
    assert (await approve(api, request_id)).status_code == 200
    response = await api.post(f"{PREFIX}/load-requests/{request_id}/decline")
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "MOR_LOAD_REQUEST_NOT_PENDING"


async def test_a_user_cannot_ask_for_a_load_onto_a_card_not_assigned_to_them(
    mor_tenant: Tenant,
) -> None:
    api = mor_tenant.client
    card = await mor_card(api)
    stranger = await approved_card_user(api)
    response = await ask_load(api, card, 10, user_id=stranger["Id"])
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "MOR_CARD_NOT_ASSIGNED_TO_USER"


async def test_an_approval_the_wallet_cannot_pay_ends_the_request_failed(
    mor_tenant: Tenant,
) -> None:
    api = mor_tenant.client
    card = await mor_card(api, master=20)
    request_id = await load_request(api, card, 50)
    response = await approve(api, request_id)
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "FAILED"
    assert response.json()["FailureCode"] == "INSUFFICIENT_FUNDS"
    assert await balance(api, card["Id"]) == 0
    assert await master_available(api) == Decimal(20)


async def test_unassigning_a_card_cancels_its_pending_load_requests(mor_tenant: Tenant) -> None:
    api = mor_tenant.client
    card = await mor_card(api)
    request_id = await load_request(api, card, 10)
    assert (await unassign(api, card["Id"])).status_code == 200
    read = await api.get(f"{PREFIX}/load-requests/{request_id}")
    assert read.json()["Status"] == "CANCELLED"
    assert (await approve(api, request_id)).status_code == 409


async def test_the_merchant_lists_load_requests_by_status(mor_tenant: Tenant) -> None:
    api = mor_tenant.client
    card = await mor_card(api)
    pending = await load_request(api, card, 10)
    funded = await load_request(api, card, 11)
    assert (await approve(api, funded)).status_code == 200
    response = await api.get(f"{PREFIX}/load-requests", params={"status": "PENDING"})
    assert response.status_code == 200, response.text
    assert [r["Id"] for r in response.json()["Items"]] == [pending]
    everything = await api.get(f"{PREFIX}/load-requests", params={"cardId": card["Id"]})
    assert [r["Id"] for r in everything.json()["Items"]] == [funded, pending]


async def test_each_change_of_a_load_request_sends_its_event(
    app: FastAPI, mor_tenant: Tenant
) -> None:
    api = mor_tenant.client
    card = await mor_card(api)
    request_id = await load_request(api, card, 10)
    assert (await approve(api, request_id)).status_code == 200
    async with app.state.session_factory() as session:
        stmt = (
            select(Event.type)
            .where(Event.company_id == mor_tenant.company_id)
            .order_by(Event.created_at)
        )
        types = [t for t in (await session.execute(stmt)).scalars() if t.startswith("mor.")]
    assert types == [
        "mor.load_request.pending",
        "mor.load_request.approved",
        "mor.load_request.funded",
    ]


async def test_another_companys_load_request_is_not_found(
    mor_tenant: Tenant, make_tenant: TenantFactory
) -> None:
    other = await make_tenant("Other MOR", mor=True)
    card = await mor_card(other.client)
    request_id = await load_request(other.client, card, 10)
    api = mor_tenant.client
    for response in (
        await api.get(f"{PREFIX}/load-requests/{request_id}"),
        await approve(api, request_id),
        await api.post(f"{PREFIX}/load-requests/{request_id}/decline"),
    ):
        assert response.status_code == 404, response.text
        assert response.json()["Code"] == "MOR_LOAD_REQUEST_NOT_FOUND"
