"""Sandbox stablecoin deposits at the card provider: the USD credit to the master account, the
`card.deposit.received` event, and the DEPOSIT auto top-up they run."""

from __future__ import annotations

import json
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
from tests.cards.steps import approved_card_user, ordered_card
from tests.onboarding import set_fault


async def _deposit(
    api: httpx.AsyncClient,
    card: dict[str, Any],
    amount: float | int | Decimal,
    currency: str = "USDC",
    key: str | None = None,
) -> httpx.Response:
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Idempotency-Key"] = key
    # Written by hand so a six-decimal amount reaches the API exactly as typed.
    body = f'{{"Amount": {amount}, "Currency": {json.dumps(currency)}}}'
    return await api.post(
        f"/api/v2/sandbox/cards/{card['Id']}/deposits",
        params={"userId": card["UserId"]},
        content=body,
        headers=headers,
    )


async def _deposited(
    api: httpx.AsyncClient,
    card: dict[str, Any],
    amount: float | int | Decimal,
    currency: str = "USDC",
) -> dict[str, Any]:
    response = await _deposit(api, card, amount, currency)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def _deposit_rule(
    api: httpx.AsyncClient,
    card: dict[str, Any],
    *,
    enabled: bool = True,
    amount: float = 25,
    monthly_limit: float = 100,
    currency: str = "USDC",
) -> None:
    response = await set_auto_topup(
        api,
        card,
        "deposit",
        Enabled=enabled,
        Amount=amount,
        MonthlyLimit=monthly_limit,
        Currency=currency,
    )
    assert response.status_code == 200, response.text


async def _card(api: httpx.AsyncClient) -> dict[str, Any]:
    """An ACTIVE card-provider card without fees; the master account starts empty."""
    card = await active_card(api, master=0)
    await set_fees(api, card)
    return card


async def test_deposit_with_the_rule_on_tops_the_card_up_by_the_rule_amount(
    api: httpx.AsyncClient,
) -> None:
    card = await _card(api)
    await set_fees(api, card, TopupFixedFee=1)
    await _deposit_rule(api, card, amount=25)
    result = await _deposited(api, card, 40)
    assert result["CardId"] == card["Id"]
    assert Decimal(str(result["Amount"])) == Decimal(40)
    assert result["Currency"] == "USDC"
    assert Decimal(str(result["CreditedAmount"])) == Decimal(40)
    assert result["AutoTopupOrderId"] is not None
    assert await card_balance(api, card) == Decimal(24)  # 25 less the 1.00 fee
    assert await master_available(api) == Decimal(15)


async def test_deposit_below_the_rule_amount_tops_up_its_value_rounded_down_to_the_cent(
    api: httpx.AsyncClient,
) -> None:
    card = await _card(api)
    await _deposit_rule(api, card, amount=25, currency="USDT")
    result = await _deposited(api, card, Decimal("10.123456"), "USDT")
    assert Decimal(str(result["CreditedAmount"])) == Decimal("10.12")
    assert result["AutoTopupOrderId"] is not None
    assert await card_balance(api, card) == Decimal("10.12")
    assert await master_available(api) == Decimal(0)


async def test_deposit_with_the_rule_off_only_credits_the_master_account(
    api: httpx.AsyncClient,
) -> None:
    card = await _card(api)
    await _deposit_rule(api, card, enabled=False)
    result = await _deposited(api, card, 40)
    assert result["AutoTopupOrderId"] is None
    assert await card_balance(api, card) == Decimal(0)
    assert await master_available(api) == Decimal(40)


async def test_deposit_in_another_currency_than_the_rules_does_not_top_up(
    api: httpx.AsyncClient,
) -> None:
    card = await _card(api)
    await _deposit_rule(api, card, currency="USDC")
    result = await _deposited(api, card, 40, "USDT")
    assert result["AutoTopupOrderId"] is None
    assert await card_balance(api, card) == Decimal(0)
    assert await master_available(api) == Decimal(40)


async def test_deposit_auto_top_up_stays_within_the_monthly_limit(
    api: httpx.AsyncClient,
) -> None:
    card = await _card(api)
    await _deposit_rule(api, card, amount=25, monthly_limit=40)
    assert (await _deposited(api, card, 30))["AutoTopupOrderId"] is not None
    assert (await _deposited(api, card, 30))["AutoTopupOrderId"] is None  # 25 + 25 > 40
    assert await card_balance(api, card) == Decimal(25)
    assert await master_available(api) == Decimal(35)


async def test_deposit_below_the_top_up_minimum_does_not_top_up(api: httpx.AsyncClient) -> None:
    card = await _card(api)
    await _deposit_rule(api, card)
    result = await _deposited(api, card, 4.99)
    assert result["AutoTopupOrderId"] is None
    assert await card_balance(api, card) == Decimal(0)
    assert await master_available(api) == Decimal("4.99")


async def test_deposit_stays_in_the_master_account_when_its_auto_top_up_fails(
    api: httpx.AsyncClient,
) -> None:
    card = await _card(api)
    await _deposit_rule(api, card)
    await set_fault(api, "cardprov", "load", "error")
    result = await _deposited(api, card, 40)
    assert result["AutoTopupOrderId"] is None
    assert await card_balance(api, card) == Decimal(0)
    assert await master_available(api) == Decimal(40)


async def test_deposit_whose_auto_top_up_timed_out_is_finished_by_a_retry_with_the_key(
    api: httpx.AsyncClient,
) -> None:
    card = await _card(api)
    await _deposit_rule(api, card, amount=25)
    await set_fault(api, "cardprov", "load", "timeout")
    timed_out = await _deposit(api, card, 40, key="deposit-timeout")
    assert timed_out.status_code == 503, timed_out.text
    assert await master_available(api) == Decimal(15)  # received; 25 reserved for the top-up
    response = await _deposit(api, card, 40, key="deposit-timeout")
    assert response.status_code == 200, response.text
    assert response.json()["AutoTopupOrderId"] is not None
    assert await card_balance(api, card) == Decimal(25)
    assert await master_available(api) == Decimal(15)


async def test_deposit_to_a_card_of_another_provider_is_409(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    card = await ordered_card(api, user, provider="switchprov")
    response = await _deposit(api, card, 40)
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "DEPOSIT_NOT_SUPPORTED"
    assert await master_available(api) == Decimal(0)


async def test_deposit_to_a_cancelled_card_is_409(api: httpx.AsyncClient) -> None:
    card = await _card(api)
    cancelled = await api.delete(f"/api/v2/cards/{card['Id']}", params={"userId": card["UserId"]})
    assert cancelled.status_code == 200, cancelled.text
    response = await _deposit(api, card, 40)
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "CARD_CANCELLED"


async def test_deposit_to_another_users_card_is_404(api: httpx.AsyncClient) -> None:
    card = await _card(api)
    other = await approved_card_user(api)
    response = await _deposit(api, card | {"UserId": other["Id"]}, 40)
    assert response.status_code == 404, response.text
    assert response.json()["Code"] == "CARD_NOT_FOUND"


async def test_deposit_retried_with_the_same_key_is_received_once(api: httpx.AsyncClient) -> None:
    card = await _card(api)
    await _deposit_rule(api, card, amount=25)
    first = await _deposit(api, card, 40, key="deposit-1")
    again = await _deposit(api, card, 40, key="deposit-1")
    assert first.status_code == again.status_code == 200, again.text
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert await card_balance(api, card) == Decimal(25)
    assert await master_available(api) == Decimal(15)


async def test_deposit_records_the_card_deposit_received_event(api: httpx.AsyncClient) -> None:
    card = await _card(api)
    result = await _deposited(api, card, 12.5, "USDT")
    response = await api.get("/api/v2/events", params={"type": "card.deposit.received"})
    assert response.status_code == 200, response.text
    assert [e["Data"] for e in response.json()["Items"]] == [
        {
            "cardId": card["Id"],
            "userId": card["UserId"],
            "amount": 12.5,
            "currency": "USDT",
            "transferId": result["DepositId"],
        }
    ]
