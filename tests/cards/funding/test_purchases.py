"""Sandbox purchases: approval (hold and clearing), declines, decline fees and the
SYSTEM_BLOCKED cycle, and the auto top-up rules they trigger."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from finplat.events.envelope import data_of
from finplat.events.models import Event
from finplat.reconciliation import service as reconciliation
from tests.cards.funding.steps import (
    active_card,
    auto_topup_settings,
    card_balance,
    master_available,
    purchase,
    set_auto_topup,
    set_fees,
    spent_unseen,
    topup,
    unload,
)
from tests.cards.steps import card_detail, control
from tests.onboarding import set_fault


async def _event_types(app: FastAPI, card: dict[str, Any]) -> list[str]:
    """The card's `card.transaction.*` event types, sorted."""
    async with app.state.session_factory() as session:
        rows = (await session.execute(select(Event).where(Event.domain == "card"))).scalars()
        return sorted(
            e.type
            for e in rows
            if e.type.startswith("card.transaction.") and data_of(e.body)["cardId"] == card["Id"]
        )


async def _funded_card(api: httpx.AsyncClient, value: float = 100) -> dict[str, Any]:
    card = await active_card(api, master=1000.0)
    await set_fees(api, card)
    assert (await topup(api, card, value)).status_code == 200
    return card


async def test_approved_purchase_is_held_then_cleared(api: httpx.AsyncClient, app: FastAPI) -> None:
    card = await _funded_card(api)
    result = await purchase(api, card, 12.5)
    assert result["Approved"] is True
    assert result["DeclineReason"] is None
    assert await card_balance(api, card) == Decimal("87.5")
    assert await _event_types(app, card) == [
        "card.transaction.authorized",
        "card.transaction.cleared",
    ]


async def test_purchase_beyond_the_balance_is_declined(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _funded_card(api, 10)
    result = await purchase(api, card, 10.01)
    assert result["Status"] == "DECLINED"
    assert result["DeclineReason"] == "INSUFFICIENT_FUNDS"
    assert (result["DeclineFee"], result["DeclineFeeStatus"]) == (0, "NONE")  # none configured
    assert await card_balance(api, card) == Decimal("10")
    assert await _event_types(app, card) == ["card.transaction.declined"]


async def test_purchase_with_a_frozen_card_is_declined(api: httpx.AsyncClient) -> None:
    card = await _funded_card(api)
    assert (await control(api, card, "freeze")).status_code == 200
    result = await purchase(api, card, 1)
    assert result["Status"] == "DECLINED"
    assert result["DeclineReason"] == "CARD_FROZEN"
    assert await card_balance(api, card) == Decimal("100")


async def test_decline_fee_is_taken_from_a_card_that_can_pay_it(api: httpx.AsyncClient) -> None:
    card = await _funded_card(api, 10)
    await set_fees(api, card, DeclineFee=2.5)
    result = await purchase(api, card, 50)
    assert result["Status"] == "DECLINED"
    assert Decimal(str(result["DeclineFee"])) == Decimal("2.5")
    assert result["DeclineFeeStatus"] == "COLLECTED"
    assert result["CardStatus"] == "ACTIVE"
    assert await card_balance(api, card) == Decimal("7.5")


async def test_a_purchase_cannot_spend_what_an_unload_in_flight_has_reserved(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _funded_card(api, 50)
    # The unload is reserved in the ledger (10 left available) but not made at the provider.
    await set_fault(api, "cardprov", "unload", "transient", count=3)
    assert (await unload(api, card, 40, key="in-flight")).status_code == 503
    declined = await purchase(api, card, 15)
    assert (declined["Approved"], declined["DeclineReason"]) == (False, "INSUFFICIENT_FUNDS")
    done = await unload(api, card, 40, key="in-flight")
    assert done.status_code == 200, done.text
    assert await card_balance(api, card) == Decimal("10")
    report = await reconciliation.reconcile(app.state.session_factory, app.state.providers)
    assert (report.differences, report.errors) == ([], [])


async def test_unpaid_decline_fee_blocks_the_card_until_a_top_up_pays_it(
    api: httpx.AsyncClient,
) -> None:
    card = await _funded_card(api, 5)
    await set_fees(api, card, DeclineFee=6)
    declined = await purchase(api, card, 50)
    assert declined["Status"] == "DECLINED"
    assert declined["DeclineFeeStatus"] == "OUTSTANDING"
    assert declined["CardStatus"] == "SYSTEM_BLOCKED"
    assert (await card_detail(api, card))["Status"] == "SYSTEM_BLOCKED"
    refused = await control(api, card, "enable")
    assert refused.status_code == 409, refused.text
    assert refused.json()["Code"] == "CARD_SYSTEM_BLOCKED"

    paid = await topup(api, card, 20)
    assert paid.status_code == 200, paid.text
    assert "decline fee" in paid.json()["Message"]
    assert await card_balance(api, card) == Decimal("5") + Decimal("20") - Decimal("6")
    assert (await card_detail(api, card))["Status"] == "ACTIVE"
    enabled = await control(api, card, "enable")
    assert enabled.status_code == 200, enabled.text
    assert enabled.json()["Status"] == "ACTIVE"
    assert (await purchase(api, card, 1))["Approved"] is True


async def test_decline_fee_the_provider_cannot_collect_blocks_the_card(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _funded_card(api, 10)
    await set_fees(api, card, DeclineFee=6)
    await spent_unseen(app, card, 800)  # the ledger shows 10, the provider holds 2
    declined = await purchase(api, card, 50)
    assert declined["Status"] == "DECLINED"
    assert declined["DeclineFeeStatus"] == "OUTSTANDING"
    assert declined["CardStatus"] == "SYSTEM_BLOCKED"
    assert await card_balance(api, card) == Decimal("10")


async def test_low_balance_auto_top_up_runs_after_a_clearing(api: httpx.AsyncClient) -> None:
    card = await _funded_card(api, 50)
    rule = await set_auto_topup(api, card, "low-balance", Threshold=20, Amount=30, MonthlyLimit=100)
    assert rule.status_code == 200, rule.text
    assert (await purchase(api, card, 20))["AutoTopupOrderId"] is None  # 30 left
    result = await purchase(api, card, 15)  # 15 left, below 20
    assert result["AutoTopupOrderId"] is not None
    assert await card_balance(api, card) == Decimal("45")
    settings = await auto_topup_settings(api, card)
    assert settings["CurrentMonth"] == {"Count": 1, "Amount": 30.0, "Currency": "USD"}
    assert await master_available(api) == Decimal("1000") - Decimal("50") - Decimal("30")


async def test_low_balance_auto_top_up_stays_within_the_monthly_limit(
    api: httpx.AsyncClient,
) -> None:
    card = await _funded_card(api, 50)
    rule = await set_auto_topup(api, card, "low-balance", Threshold=40, Amount=10, MonthlyLimit=15)
    assert rule.status_code == 200, rule.text
    assert (await purchase(api, card, 20))["AutoTopupOrderId"] is not None  # 30 -> 40
    assert (await purchase(api, card, 20))["AutoTopupOrderId"] is None  # limit reached
    assert await card_balance(api, card) == Decimal("20")


async def test_a_purchase_is_answered_when_its_auto_top_up_cannot_be_made(
    api: httpx.AsyncClient,
) -> None:
    card = await _funded_card(api, 50)
    rule = await set_auto_topup(
        api, card, "low-balance", Threshold=40, Amount=5000, MonthlyLimit=10000
    )
    assert rule.status_code == 200, rule.text
    result = await purchase(api, card, 20)  # 30 left, below 40; the master holds 950
    assert result["Approved"] is True
    assert (result["Status"], result["ApprovedAmount"]) == ("AUTHORIZED", 20.0)
    assert result["AutoTopupOrderId"] is None
    assert await card_balance(api, card) == Decimal("30")


async def test_failed_transaction_auto_top_up_runs_after_an_insufficient_funds_decline(
    api: httpx.AsyncClient,
) -> None:
    card = await _funded_card(api, 5)
    rule = await set_auto_topup(api, card, "failed-tx", Amount=25, MonthlyLimit=100)
    assert rule.status_code == 200, rule.text
    result = await purchase(api, card, 10)
    assert result["Status"] == "DECLINED"
    assert result["AutoTopupOrderId"] is not None
    assert await card_balance(api, card) == Decimal("30")
    assert (await purchase(api, card, 10))["Approved"] is True


async def test_deposit_auto_top_up_is_for_card_provider_cards_in_stable_coins(
    api: httpx.AsyncClient,
) -> None:
    card = await _funded_card(api)
    body = {
        "CardId": card["Id"],
        "Enabled": True,
        "Amount": 25,
        "MonthlyLimit": 100,
        "Currency": "USDC",
    }
    saved = await api.post(
        "/api/v2/cards/auto-topup/deposit", params={"userId": card["UserId"]}, json=body
    )
    assert saved.status_code == 200, saved.text
    assert saved.json()["Deposit"]["Currency"] == "USDC"
    wrong = await api.post(
        "/api/v2/cards/auto-topup/deposit",
        params={"userId": card["UserId"]},
        json=body | {"Currency": "EUR"},
    )
    assert wrong.status_code == 400, wrong.text


async def test_auto_top_up_settings_of_another_users_card_are_not_found(
    api: httpx.AsyncClient,
) -> None:
    card = await _funded_card(api)
    other = await active_card(api, master=0)
    response = await api.get(
        f"/api/v2/cards/{card['Id']}/auto-topup", params={"userId": other["UserId"]}
    )
    assert response.status_code == 404, response.text


async def test_a_clearing_while_a_low_balance_top_up_is_in_flight_does_not_start_another(
    api: httpx.AsyncClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The balance a low-balance rule compares with its threshold counts the top-ups on their
    way to the card: a clearing that lands while one is in flight needs no second one."""
    card = await _funded_card(api, 50)
    rule = await set_auto_topup(api, card, "low-balance", Threshold=20, Amount=30, MonthlyLimit=100)
    assert rule.status_code == 200, rule.text
    program = app.state.providers.card_programs[card["Provider"]]
    original = program.load
    meanwhile: list[dict[str, Any]] = []
    loads = 0

    async def another_purchase_clears_meanwhile(**load: Any) -> Any:
        nonlocal loads
        loads += 1
        if loads == 1:
            meanwhile.append(await purchase(api, card, 5))  # 10 left, 30 on its way
        return await original(**load)

    monkeypatch.setattr(program, "load", another_purchase_clears_meanwhile)
    first = await purchase(api, card, 35)  # 15 left, below 20: a top-up of 30 starts
    assert first["AutoTopupOrderId"] is not None
    assert meanwhile[0]["Approved"] is True
    assert meanwhile[0]["AutoTopupOrderId"] is None
    assert await card_balance(api, card) == Decimal("40")
    settings = await auto_topup_settings(api, card)
    assert settings["CurrentMonth"] == {"Count": 1, "Amount": 30.0, "Currency": "USD"}
