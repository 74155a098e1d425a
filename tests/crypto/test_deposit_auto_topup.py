"""Credited crypto deposits feed the card's DEPOSIT auto top-up rule: the crypto balance pays
the top-up 1:1 in USD, once; a top-up that does not run leaves the money in the balance."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx

from tests.cards.funding.steps import (
    active_card,
    card_balance,
    master_available,
    set_auto_topup,
    set_fees,
)
from tests.crypto.steps import add_blocks, crypto_balance, payin_address, send
from tests.onboarding import set_fault


async def _card_with_rule(
    api: httpx.AsyncClient, amount: float = 25, currency: str = "USDC", enabled: bool = True
) -> dict[str, Any]:
    card = await active_card(api, master=0)
    await set_fees(api, card)
    response = await set_auto_topup(
        api,
        card,
        "deposit",
        Enabled=enabled,
        Amount=amount,
        MonthlyLimit=100,
        Currency=currency,
    )
    assert response.status_code == 200, response.text
    return card


async def _deposit(
    api: httpx.AsyncClient, card: dict[str, Any], amount: str, currency: str = "USDC"
) -> dict[str, Any]:
    address = await payin_address(api, card["UserId"], currency, 137)
    return await send(api, address["Address"], amount, currency, 137, confirmations=128)


async def test_a_credited_deposit_tops_the_card_up_by_the_rule_amount(
    api: httpx.AsyncClient,
) -> None:
    card = await _card_with_rule(api, amount=25)
    deposit = await _deposit(api, card, "40")
    assert deposit["Status"] == "CREDITED"
    assert deposit["AutoTopupStatus"] == "TOPPED_UP"
    assert deposit["AutoTopupOrderId"] is not None
    assert await card_balance(api, card) == Decimal(25)
    assert Decimal(str((await crypto_balance(api, card["UserId"]))["Posted"])) == 15
    assert await master_available(api) == 0


async def test_a_smaller_deposit_tops_up_its_whole_cents_and_keeps_the_rest(
    api: httpx.AsyncClient,
) -> None:
    card = await _card_with_rule(api, amount=25, currency="USDT")
    deposit = await _deposit(api, card, "10.123456", "USDT")
    assert deposit["AutoTopupStatus"] == "TOPPED_UP"
    assert await card_balance(api, card) == Decimal("10.12")
    balance = await crypto_balance(api, card["UserId"], "USDT")
    assert Decimal(str(balance["Posted"])) == Decimal("0.003456")


async def test_a_pending_deposit_tops_up_nothing_until_it_is_final(
    api: httpx.AsyncClient,
) -> None:
    card = await _card_with_rule(api)
    address = await payin_address(api, card["UserId"], "USDC", 42161)
    deposit = await send(api, address["Address"], "30", "USDC", 42161, confirmations=5)
    assert deposit["AutoTopupStatus"] is None
    assert await card_balance(api, card) == 0
    final = await add_blocks(api, card["UserId"], deposit["DepositId"], 15)
    assert final["AutoTopupStatus"] == "TOPPED_UP"
    assert await card_balance(api, card) == Decimal(25)


async def test_a_deposit_in_another_currency_than_the_rules_tops_up_nothing(
    api: httpx.AsyncClient,
) -> None:
    card = await _card_with_rule(api, currency="USDT")
    deposit = await _deposit(api, card, "40", "USDC")
    assert deposit["AutoTopupStatus"] is None
    assert await card_balance(api, card) == 0
    assert Decimal(str((await crypto_balance(api, card["UserId"]))["Posted"])) == 40


async def test_below_the_top_up_minimum_nothing_leaves_the_crypto_balance(
    api: httpx.AsyncClient,
) -> None:
    card = await _card_with_rule(api)
    deposit = await _deposit(api, card, "4.99")
    assert deposit["AutoTopupStatus"] == "SKIPPED"
    assert Decimal(str((await crypto_balance(api, card["UserId"]))["Posted"])) == Decimal("4.99")


async def test_a_refused_top_up_gives_the_money_back_to_the_crypto_balance(
    api: httpx.AsyncClient,
) -> None:
    card = await _card_with_rule(api)
    await set_fault(api, "cardprov", "load", "error")
    deposit = await _deposit(api, card, "40")
    assert deposit["AutoTopupStatus"] == "FAILED"
    assert deposit["AutoTopupOrderId"] is None
    assert await card_balance(api, card) == 0
    assert Decimal(str((await crypto_balance(api, card["UserId"]))["Posted"])) == 40
    assert await master_available(api) == 0


async def test_a_timed_out_top_up_is_finished_by_the_next_round_once(
    api: httpx.AsyncClient,
) -> None:
    card = await _card_with_rule(api)
    await set_fault(api, "cardprov", "load", "timeout")
    deposit = await _deposit(api, card, "40")
    assert deposit["AutoTopupStatus"] == "CONVERTED"
    # The next round (here: the next chain simulation) resumes the same top-up.
    again = await add_blocks(api, card["UserId"], deposit["DepositId"], 1)
    assert again["AutoTopupStatus"] == "TOPPED_UP"
    assert await card_balance(api, card) == Decimal(25)
    assert Decimal(str((await crypto_balance(api, card["UserId"]))["Posted"])) == 15
