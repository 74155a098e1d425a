"""Cancelling a card that holds money: an unpaid decline fee is collected from it, the rest
goes back to the master account, and a fee the card cannot pay is written off."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI

from finplat.cards import programs
from finplat.cards.models import Card
from tests.cards.funding.outcome_steps import (
    cancel,
    deleted_events,
    fee_revenue,
    fundings,
    holding_card,
    owe_decline_fee,
)
from tests.cards.funding.steps import (
    active_card,
    card_balance,
    master_available,
    purchase,
    set_fees,
    topup,
)
from tests.cards.steps import card_detail
from tests.onboarding import set_fault


async def test_cancelling_a_card_returns_its_balance_to_the_master_account(
    api: httpx.AsyncClient,
) -> None:
    card = await active_card(api, master=1000.0)
    await set_fees(api, card, UnloadFeePercentage=1)
    assert (await topup(api, card, 100)).status_code == 200
    response = await cancel(api, card)
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "CANCELLED"
    assert Decimal(str(response.json()["AvailableBalance"])) == 0
    # 100 back, less the 1 % unload fee
    assert await master_available(api) == Decimal("999")


async def test_cancellation_after_an_unload_timeout_resumes_the_same_unload(
    api: httpx.AsyncClient,
) -> None:
    card = await active_card(api, master=1000.0)
    await set_fees(api, card)
    assert (await topup(api, card, 100)).status_code == 200
    await set_fault(api, "cardprov", "unload", "timeout")
    timed_out = await cancel(api, card)
    assert timed_out.status_code == 503, timed_out.text
    assert (await card_detail(api, card))["Status"] == "ACTIVE"
    assert await card_balance(api, card) == 0  # reserved for the unload
    response = await cancel(api, card)
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "CANCELLED"
    assert await master_available(api) == Decimal("1000")


async def test_cancellation_retried_after_the_provider_cancelled_unanswered_completes(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await active_card(api, master=1000.0)
    await set_fees(api, card)
    assert (await topup(api, card, 100)).status_code == 200
    # The provider cancels the card, but its answer never arrives.
    await set_fault(api, "cardprov", "change_status", "timeout")
    timed_out = await cancel(api, card)
    assert timed_out.status_code == 503, timed_out.text
    assert (await card_detail(api, card))["Status"] == "ACTIVE"
    response = await cancel(api, card)
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "CANCELLED"
    assert await master_available(api) == Decimal("1000")
    assert (await _deleted_event(app, card))["newStatus"] == "CANCELLED"


# ----------------------------------------------------------------- unpaid decline fees


async def _deleted_event(app: FastAPI, card: dict[str, Any]) -> dict[str, Any]:
    [event] = await deleted_events(app, card)
    return event


async def test_cancellation_collects_the_unpaid_decline_fee_before_returning_the_rest(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await holding_card(api, 10)
    await owe_decline_fee(app, card, 250)
    response = await cancel(api, card)
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "CANCELLED"
    assert await fee_revenue(app, card) == Decimal("2.5")
    assert await master_available(api) == Decimal("990") + Decimal("7.5")
    assert (await _deleted_event(app, card))["declineFeeWrittenOff"] == 0


async def test_the_unload_fee_of_cancellation_applies_to_what_is_left_after_the_decline_fee(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await holding_card(api, 10)
    await set_fees(api, card, UnloadFeePercentage=1)
    await owe_decline_fee(app, card, 250)
    assert (await cancel(api, card)).status_code == 200
    # 1 % of the 7.50 left = 0.075 -> 0.08 (rounded up)
    assert await fee_revenue(app, card) == Decimal("2.58")
    assert await master_available(api) == Decimal("990") + Decimal("7.42")


async def test_cancellation_writes_off_a_decline_fee_the_empty_card_cannot_pay(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await active_card(api, master=1000.0)
    await set_fees(api, card, DeclineFee=2.5)
    declined = await purchase(api, card, 50)
    assert declined["CardStatus"] == "SYSTEM_BLOCKED"
    response = await cancel(api, card)
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "CANCELLED"
    assert await fee_revenue(app, card) == 0
    assert await master_available(api) == Decimal("1000")
    assert (await _deleted_event(app, card))["declineFeeWrittenOff"] == Decimal("2.5")
    written_off = [r for r in await fundings(app, card) if r.status == "WRITTEN_OFF"]
    assert [(r.kind, r.amount_minor) for r in written_off] == [("DECLINE_FEE", 250)]


async def test_cancellation_collects_what_the_card_holds_and_writes_off_the_rest_of_the_fee(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await holding_card(api, 10)
    await set_fees(api, card, DeclineFee=6)
    assert (await purchase(api, card, 50))["CardStatus"] == "ACTIVE"  # 6 paid, 4 left
    assert (await purchase(api, card, 50))["CardStatus"] == "SYSTEM_BLOCKED"  # 6 owed
    assert (await cancel(api, card)).status_code == 200
    assert await fee_revenue(app, card) == Decimal("10")
    assert await master_available(api) == Decimal("990")
    assert (await _deleted_event(app, card))["declineFeeWrittenOff"] == Decimal("2")


async def test_a_decline_fee_collection_that_times_out_is_collected_once_on_retry(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await holding_card(api, 10)
    await owe_decline_fee(app, card, 250)
    await set_fault(api, "cardprov", "unload", "timeout")
    timed_out = await cancel(api, card)
    assert timed_out.status_code == 503, timed_out.text
    assert (await card_detail(api, card))["Status"] == "SYSTEM_BLOCKED"
    assert await card_balance(api, card) == Decimal("7.5")  # the fee, reserved
    response = await cancel(api, card)
    assert response.status_code == 200, response.text
    assert await fee_revenue(app, card) == Decimal("2.5")
    assert await master_available(api) == Decimal("997.5")
    assert (await _deleted_event(app, card))["declineFeeWrittenOff"] == 0


async def test_a_refused_decline_fee_collection_leaves_the_fee_owed_and_the_card_open(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await holding_card(api, 10)
    await owe_decline_fee(app, card, 250)
    await set_fault(api, "cardprov", "unload", "error", HttpStatus=409)
    refused = await cancel(api, card)
    assert refused.status_code == 409, refused.text
    assert (await card_detail(api, card))["Status"] == "SYSTEM_BLOCKED"
    assert await card_balance(api, card) == Decimal("10")
    assert await fee_revenue(app, card) == 0
    # The fee is still owed: the next cancellation collects it.
    assert (await cancel(api, card)).status_code == 200
    assert await fee_revenue(app, card) == Decimal("2.5")
    assert await master_available(api) == Decimal("997.5")


# ----------------------------------------------------- a card the provider cancelled already


async def _provider_cancels_unreported(app: FastAPI, card: dict[str, Any]) -> None:
    """The provider cancels the card (as an earlier cancellation whose answer was lost did,
    or on its own) and its report has not arrived yet."""
    async with app.state.session_factory() as session:
        found = await session.get(Card, card["Id"])
    assert found is not None
    simulation = programs.simulation_of(app.state.providers, found, what="a test")
    ref = programs.provider_card_id(found)
    await simulation.cancel_on_its_own(company_id=found.company_id, card_id=ref)


async def test_cancelling_a_card_the_provider_cancelled_already_books_its_balance_back(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await holding_card(api, 100)
    await set_fees(api, card, UnloadFeePercentage=1)
    await _provider_cancels_unreported(app, card)
    response = await cancel(api, card)
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "CANCELLED"
    assert Decimal(str(response.json()["AvailableBalance"])) == 0
    # The provider returned the card's money to the programme: no unload, so no unload fee.
    assert await master_available(api) == Decimal("1000")
    assert (await _deleted_event(app, card))["cancelledBy"] == "PARTNER"
