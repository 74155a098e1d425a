"""Partner-hosted purchases over HTTP: the partner decides within `TimeoutMs`, the fallback
decides when it cannot, and what happens afterwards reaches the partner once."""

from __future__ import annotations

import time
from decimal import Decimal as D
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import func, select

from finplat.cards.transactions.models import CardTransaction
from finplat.events.models import Event
from tests.cards.funding.steps import active_card, card_balance
from tests.cards.steps import control
from tests.cards.transactions.steps import settle
from tests.local_server import free_port
from tests.partner_hosted.steps import (
    authorize,
    configure,
    deliver,
    deliveries,
    partner_hosted,
    send_again,
    webhook_secret,
)


async def external_id(api: httpx.AsyncClient, card: dict[str, Any]) -> str:
    response = await api.get(f"/api/v2/users/{card['UserId']}")
    assert response.status_code == 200, response.text
    return str(response.json()["ExternalUserId"])


async def test_the_partner_approves_and_holds_the_money_not_the_ledger(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await active_card(api, master=0)
    async with partner_hosted(api) as (partner, _):
        answer = await authorize(api, card, 25)
        assert answer["Approved"] is True
        assert answer["ResponseCode"] == "00"
        assert answer["Status"] == "AUTHORIZED"
        assert partner.available(await external_id(api, card)) == D(975)
        read = await api.get(f"/api/v2/card-transactions/{answer['CardTransactionId']}")
        assert (read.json()["PartnerDecision"], read.json()["HeldAmount"]) == ("PARTNER", 0)
    assert await card_balance(api, card) == D(0)  # nothing held in finplat's ledger
    assert await deliveries(app) == []


async def test_the_partner_declines_for_its_own_reason(api: httpx.AsyncClient) -> None:
    card = await active_card(api, master=0)
    async with partner_hosted(api) as (partner, _):
        partner.default_balance = D(10)
        answer = await authorize(api, card, 30)
    assert answer["Approved"] is False
    assert answer["DeclineReason"] == "INSUFFICIENT_FUNDS"
    assert answer["ResponseCode"] == "51"
    assert answer["DeclineFee"] == 0


async def test_the_card_rules_decline_before_the_partner_is_asked(
    api: httpx.AsyncClient,
) -> None:
    card = await active_card(api, master=0)
    async with partner_hosted(api) as (partner, _):
        assert (await control(api, card, "freeze")).status_code == 200
        answer = await authorize(api, card, 30)
    assert answer["DeclineReason"] == "CARD_FROZEN"
    assert partner.received["authorizations"] == 0


async def test_a_late_partner_is_declined_in_time_and_its_late_approval_reversed(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await active_card(api, master=0)
    async with partner_hosted(api, timeout_ms=500, fallback="DECLINE") as (partner, _):
        partner.delay_ms = 1500  # it approves, but answers after the deadline
        started = time.perf_counter()
        answer = await authorize(api, card, 30)
        assert time.perf_counter() - started < 2.5
        assert answer["Approved"] is False
        assert answer["DeclineReason"] == "PARTNER_UNAVAILABLE"
        assert answer["ResponseCode"] == "91"
        purchase = str(answer["CardTransactionId"])
        assert partner.held(purchase) == D(30)  # the late approval holds the money
        read = await api.get(f"/api/v2/card-transactions/{purchase}")
        assert (read.json()["PartnerDecision"], read.json()["Status"]) == ("STAND_IN", "DECLINED")
        partner.delay_ms = 0
        assert await deliver(app) == 1
        assert partner.held(purchase) == D(0)
        assert partner.available(await external_id(api, card)) == D(1000)
    [reversal] = await deliveries(app)
    assert (reversal.operation, reversal.status) == ("reversals", "succeeded")
    assert '"Reason":"TIMEOUT"' in reversal.body


async def test_a_late_partner_is_approved_in_time_by_an_approve_fallback(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await active_card(api, master=0)
    async with partner_hosted(api, timeout_ms=500, fallback="APPROVE") as (partner, _):
        partner.delay_ms = 1500
        started = time.perf_counter()
        answer = await authorize(api, card, 30)
        assert time.perf_counter() - started < 2.5
        assert answer["Approved"] is True
        assert answer["Status"] == "AUTHORIZED"
        partner.delay_ms = 0
        assert await deliver(app) == 1
        # The stand-in approval and the partner's own late one hold the amount once.
        assert partner.available(await external_id(api, card)) == D(970)
    [adjustment] = await deliveries(app)
    assert adjustment.operation == "adjustments"
    assert '"Reason":"STAND_IN_APPROVAL"' in adjustment.body


async def test_a_partner_answering_5xx_gets_the_fallback_and_the_reversal_is_retried(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await active_card(api, master=0)
    async with partner_hosted(api, fallback="DECLINE") as (partner, _):
        partner.fail_rate = 1.0
        answer = await authorize(api, card, 30)
        assert answer["DeclineReason"] == "PARTNER_UNAVAILABLE"
        assert await deliver(app) == 1
        [failed] = await deliveries(app)
        assert (failed.status, failed.last_status_code) == ("retrying", 503)
        partner.fail_rate = 0.0
        await send_again(app)
        assert await deliver(app) == 1
    [delivered] = await deliveries(app)
    assert delivered.status == "succeeded"
    assert delivered.attempts == 2


async def test_an_unreachable_partner_gets_the_fallback(api: httpx.AsyncClient) -> None:
    card = await active_card(api, master=0)
    await webhook_secret(api)
    closed = f"http://localhost:{free_port()}"
    assert (await configure(api, closed, fallback="APPROVE")).status_code == 200
    started = time.perf_counter()
    answer = await authorize(api, card, 30)
    assert time.perf_counter() - started < 2.5
    assert answer["Approved"] is True


async def test_clearing_and_refund_reach_the_partner_once_each(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await active_card(api, master=0)
    async with partner_hosted(api) as (partner, _):
        user = await external_id(api, card)
        answer = await authorize(api, card, 25)
        auth = answer["AuthorizationId"]
        assert (await settle(api, card, auth, "clear")).status_code == 200
        refunded = await settle(api, card, auth, "refund", 5)
        assert refunded.status_code == 200, refunded.text
        assert await deliver(app) == 2
        assert (partner.balance(user), partner.available(user)) == (D(980), D(980))
        await send_again(app)  # the acknowledgements were lost: both are sent again
        assert await deliver(app) == 2
        assert partner.duplicates == 2
        assert (partner.balance(user), partner.available(user)) == (D(980), D(980))
    assert sorted(d.operation for d in await deliveries(app)) == ["clearings", "refunds"]


async def test_a_network_reversal_releases_the_partner_hold(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await active_card(api, master=0)
    async with partner_hosted(api) as (partner, _):
        answer = await authorize(api, card, 40)
        reversed_ = await settle(api, card, answer["AuthorizationId"], "reverse")
        assert reversed_.status_code == 200, reversed_.text
        assert reversed_.json()["Status"] == "REVERSED"
        assert await deliver(app) == 1
        assert partner.held(str(answer["CardTransactionId"])) == D(0)


async def test_an_incremental_authorization_adjusts_the_partner_hold(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await active_card(api, master=0)
    async with partner_hosted(api) as (partner, _):
        answer = await authorize(api, card, 40)
        grown = await settle(api, card, answer["AuthorizationId"], "increment", 10)
        assert grown.status_code == 200, grown.text
        assert await deliver(app) == 1
        assert partner.held(str(answer["CardTransactionId"])) == D(50)


async def test_partner_hosted_purchases_send_their_webhook_events(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await active_card(api, master=0)
    async with partner_hosted(api) as (partner, _):
        first = await authorize(api, card, 25)
        await settle(api, card, first["AuthorizationId"], "clear")
        await settle(api, card, first["AuthorizationId"], "refund", 5)
        second = await authorize(api, card, 10)
        await settle(api, card, second["AuthorizationId"], "reverse")
        partner.default_balance = D(0)
        await authorize(api, card, 5000)
    async with app.state.session_factory() as session:
        stmt = select(Event.type, func.count()).where(Event.type.like("card.transaction.%"))
        counts = dict((await session.execute(stmt.group_by(Event.type))).all())
        decided = (
            await session.execute(select(CardTransaction.partner_decision).distinct())
        ).scalars()
        assert set(decided) == {"PARTNER"}
    assert counts == {
        "card.transaction.authorized": 2,
        "card.transaction.cleared": 1,
        "card.transaction.refunded": 1,
        "card.transaction.reversed": 1,
        "card.transaction.declined": 1,
    }
