"""Purchases through the provider path: the real-time decision holds, the provider's events
clear, reverse, increment, refund or expire the hold, each once, over HTTP."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import httpx
from fastapi import FastAPI
from sqlalchemy import func, select

from finplat.cards.transactions import service
from finplat.events.models import Event
from tests.cards.funding.steps import card_balance
from tests.cards.steps import control
from tests.cards.transactions.steps import authorize, funded_card, read, settle

D = Decimal


async def test_an_approved_authorization_holds_the_amount_on_the_card(
    api: httpx.AsyncClient,
) -> None:
    card = await funded_card(api)
    answer = await authorize(api, card, 30)
    assert (answer["Approved"], answer["ResponseCode"], answer["DeclineReason"]) == (
        True,
        "00",
        None,
    )
    assert answer["RulesFired"] == []
    assert await card_balance(api, card) == D(70)
    txn = await read(api, answer["CardTransactionId"])
    assert (txn["Status"], txn["HeldAmount"], txn["AuthorizationId"]) == (
        "AUTHORIZED",
        30,
        answer["AuthorizationId"],
    )
    assert [e["Type"] for e in txn["Events"]] == ["AUTHORIZATION"]


async def test_clearing_posts_the_held_amount(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    answer = await authorize(api, card, 30)
    cleared = await settle(api, card, answer["AuthorizationId"], "clear")
    assert cleared.status_code == 200, cleared.text
    assert (cleared.json()["Status"], cleared.json()["ClearedAmount"]) == ("CLEARED", 30)
    assert cleared.json()["HeldAmount"] == 0
    assert [e["Type"] for e in cleared.json()["Events"]] == ["AUTHORIZATION", "CLEARING"]
    assert await card_balance(api, card) == D(70)


async def test_clearing_below_the_hold_releases_the_rest(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    answer = await authorize(api, card, 30)
    cleared = await settle(api, card, answer["AuthorizationId"], "clear", 22.5)
    assert cleared.status_code == 200, cleared.text
    assert await card_balance(api, card) == D("77.5")


async def test_clearing_above_the_hold_posts_the_difference(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    answer = await authorize(api, card, 30)
    cleared = await settle(api, card, answer["AuthorizationId"], "clear", 36)
    assert cleared.status_code == 200, cleared.text
    assert cleared.json()["ClearedAmount"] == 36
    assert await card_balance(api, card) == D(64)


async def test_a_reversal_releases_the_hold(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    answer = await authorize(api, card, 30)
    reversed_ = await settle(api, card, answer["AuthorizationId"], "reverse")
    assert reversed_.status_code == 200, reversed_.text
    assert reversed_.json()["Status"] == "REVERSED"
    assert await card_balance(api, card) == D(100)


async def test_a_partial_reversal_keeps_the_rest_held(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    answer = await authorize(api, card, 30)
    reversed_ = await settle(api, card, answer["AuthorizationId"], "reverse", 10)
    assert reversed_.status_code == 200, reversed_.text
    assert (reversed_.json()["Status"], reversed_.json()["HeldAmount"]) == ("AUTHORIZED", 20)
    assert await card_balance(api, card) == D(80)


async def test_an_incremental_authorization_holds_more(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    answer = await authorize(api, card, 30)
    increased = await settle(api, card, answer["AuthorizationId"], "increment", 15)
    assert increased.status_code == 200, increased.text
    assert (increased.json()["HeldAmount"], increased.json()["AuthorizedAmount"]) == (45, 45)
    assert await card_balance(api, card) == D(55)


async def test_a_refund_credits_the_card_back(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    answer = await authorize(api, card, 30)
    assert (await settle(api, card, answer["AuthorizationId"], "clear")).status_code == 200
    refunded = await settle(api, card, answer["AuthorizationId"], "refund", 30)
    assert refunded.status_code == 200, refunded.text
    assert (refunded.json()["Status"], refunded.json()["RefundedAmount"]) == ("REFUNDED", 30)
    assert await card_balance(api, card) == D(100)


async def test_a_reversal_after_clearing_moves_no_money(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    answer = await authorize(api, card, 30)
    assert (await settle(api, card, answer["AuthorizationId"], "clear")).status_code == 200
    late = await settle(api, card, answer["AuthorizationId"], "reverse", 30)
    assert late.status_code == 200, late.text
    assert late.json()["Status"] == "CLEARED"
    assert await card_balance(api, card) == D(70)


async def test_a_merchant_accepting_partial_approval_gets_what_the_card_has(
    api: httpx.AsyncClient,
) -> None:
    card = await funded_card(api, 40)
    answer = await authorize(api, card, 55, PartialApproval=True)
    assert (answer["Approved"], answer["ResponseCode"], answer["ApprovedAmount"]) == (
        True,
        "10",
        40,
    )
    assert await card_balance(api, card) == D(0)


async def test_a_purchase_above_the_available_balance_is_declined_insufficient_funds(
    api: httpx.AsyncClient,
) -> None:
    card = await funded_card(api, 40)
    held = await authorize(api, card, 30)
    assert held["Approved"] is True
    answer = await authorize(api, card, 15)
    assert (answer["Approved"], answer["ResponseCode"], answer["DeclineReason"]) == (
        False,
        "51",
        "INSUFFICIENT_FUNDS",
    )
    assert answer["Status"] == "DECLINED"
    assert await card_balance(api, card) == D(10)


async def test_a_frozen_card_is_declined_card_frozen(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    assert (await control(api, card, "freeze")).status_code == 200
    answer = await authorize(api, card, 5)
    assert (answer["Approved"], answer["DeclineReason"]) == (False, "CARD_FROZEN")
    assert await card_balance(api, card) == D(100)


async def test_an_uncleared_hold_expires_after_the_expiry_period(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await funded_card(api)
    answer = await authorize(api, card, 30)
    factory = app.state.session_factory
    assert await service.expire_holds(factory, older_than=timedelta(days=7)) == 0
    assert await service.expire_holds(factory, older_than=timedelta(0)) == 1
    txn = await read(api, answer["CardTransactionId"])
    assert (txn["Status"], txn["HeldAmount"]) == ("EXPIRED", 0)
    assert await card_balance(api, card) == D(100)


async def test_a_clearing_after_expiry_still_posts(api: httpx.AsyncClient, app: FastAPI) -> None:
    card = await funded_card(api)
    answer = await authorize(api, card, 30)
    await service.expire_holds(app.state.session_factory, older_than=timedelta(0))
    cleared = await settle(api, card, answer["AuthorizationId"], "clear", 30)
    assert cleared.status_code == 200, cleared.text
    assert cleared.json()["Status"] == "CLEARED"
    assert await card_balance(api, card) == D(70)


async def test_each_purchase_event_is_sent_as_a_webhook_event(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await funded_card(api)
    answer = await authorize(api, card, 30)
    assert (await settle(api, card, answer["AuthorizationId"], "clear")).status_code == 200
    await authorize(api, card, 500)
    async with app.state.session_factory() as session:
        stmt = select(Event.type, func.count()).where(Event.type.like("card.transaction.%"))
        counts = dict((await session.execute(stmt.group_by(Event.type))).all())
    assert counts == {
        "card.transaction.authorized": 1,
        "card.transaction.cleared": 1,
        "card.transaction.declined": 1,
    }


async def test_settling_an_unknown_authorization_is_404(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    response = await settle(api, card, "cardprov_auth_unknown", "clear")
    assert response.status_code == 404
    assert response.json()["Code"] == "CARD_TRANSACTION_NOT_FOUND"


async def test_a_purchase_naming_another_users_card_is_404_and_holds_nothing(
    api: httpx.AsyncClient,
) -> None:
    card, other = await funded_card(api), await funded_card(api)
    response = await api.post(
        f"/api/v2/sandbox/cards/{card['Id']}/authorizations",
        params={"userId": other["UserId"]},
        json={"Amount": 10, "Currency": "USD", "Merchant": "Coffee Shop"},
    )
    assert response.status_code == 404, response.text
    assert response.json()["Code"] == "CARD_NOT_FOUND"
    assert await card_balance(api, card) == D(100)


async def test_a_purchase_naming_an_unknown_user_is_404_user_not_found(
    api: httpx.AsyncClient,
) -> None:
    card = await funded_card(api)
    response = await api.post(
        f"/api/v2/sandbox/cards/{card['Id']}/authorizations",
        params={"userId": 10**12},
        json={"Amount": 10, "Currency": "USD", "Merchant": "Coffee Shop"},
    )
    assert response.status_code == 404, response.text
    assert response.json()["Code"] == "USER_NOT_FOUND"


async def test_clearing_a_declined_purchase_is_409(api: httpx.AsyncClient) -> None:
    card = await funded_card(api, 10)
    answer = await authorize(api, card, 50)
    response = await settle(api, card, answer["AuthorizationId"], "clear")
    assert response.status_code == 409, response.text


async def test_the_list_shows_the_cards_purchases_newest_first(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    first = await authorize(api, card, 10)
    second = await authorize(api, card, 20)
    response = await api.get("/api/v2/card-transactions", params={"cardId": card["Id"]})
    assert response.status_code == 200, response.text
    ids = [t["Id"] for t in response.json()["Items"]]
    assert ids == [second["CardTransactionId"], first["CardTransactionId"]]
    only = await api.get(
        "/api/v2/card-transactions", params={"cardId": card["Id"], "statuses": "CLEARED"}
    )
    assert only.json()["Items"] == []


async def test_another_companys_card_transaction_is_404(
    api: httpx.AsyncClient, make_tenant: object
) -> None:
    card = await funded_card(api)
    answer = await authorize(api, card, 10)
    other = await make_tenant()  # type: ignore[operator]
    response = await other.client.get(f"/api/v2/card-transactions/{answer['CardTransactionId']}")
    assert response.status_code == 404
    listed = await other.client.get("/api/v2/card-transactions", params={"cardId": card["Id"]})
    assert listed.status_code == 404
