"""Card unloads: response fields, fees, over-unload refusal, idempotency."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI

from tests.cards.funding.steps import (
    active_card,
    card_balance,
    master_available,
    set_fees,
    spent_unseen,
    topup,
    unload,
)


async def test_unload_response_fields_and_money_movement(api: httpx.AsyncClient) -> None:
    card = await active_card(api, master=1000.0)
    await set_fees(api, card, UnloadFeePercentage=1, UnloadFixedFee=0.1)
    assert (await topup(api, card, 100)).status_code == 200
    response = await unload(api, card, 40.05)
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {
        "Success",
        "CardId",
        "RequestedAmount",
        "ActualAmount",
        "Fee",
        "NetAmount",
        "Currency",
        "Status",
        "TransactionId",
        "CompletedAt",
    }
    # 1 % of 40.05 = 0.4005 -> 0.41 (rounded up), + 0.10 fixed
    assert body["Success"] is True
    assert body["CardId"] == card["Id"]
    assert body["Currency"] == "USD"
    assert body["Status"] == "COMPLETED"
    assert body["CompletedAt"] is not None
    assert Decimal(str(body["RequestedAmount"])) == Decimal("40.05")
    assert Decimal(str(body["ActualAmount"])) == Decimal("40.05")
    assert Decimal(str(body["Fee"])) == Decimal("0.51")
    assert Decimal(str(body["NetAmount"])) == Decimal("39.54")
    assert await card_balance(api, card) == Decimal("59.95")
    assert await master_available(api) == Decimal("900") + Decimal("39.54")


async def test_unloading_more_than_the_card_holds_is_refused(api: httpx.AsyncClient) -> None:
    card = await active_card(api, master=1000.0)
    await set_fees(api, card)
    assert (await topup(api, card, 30)).status_code == 200
    response = await unload(api, card, 30.01)
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "INSUFFICIENT_CARD_BALANCE"
    assert await card_balance(api, card) == Decimal("30")
    assert await master_available(api) == Decimal("970")


async def _short_at_provider(api: httpx.AsyncClient, app: FastAPI) -> dict[str, Any]:
    """A card the ledger shows holding 50 USD (no fees) while the provider holds 30."""
    card = await active_card(api, master=1000.0)
    await set_fees(api, card)
    assert (await topup(api, card, 50)).status_code == 200
    await spent_unseen(app, card, 2000)
    return card


async def test_unloading_more_than_the_provider_holds_is_insufficient_card_balance(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _short_at_provider(api, app)
    refused = await unload(api, card, 40, key="short-at-provider")
    assert refused.status_code == 409, refused.text
    assert refused.json()["Code"] == "INSUFFICIENT_CARD_BALANCE"
    assert await card_balance(api, card) == Decimal("50")
    assert await master_available(api) == Decimal("950")


async def test_a_refusal_by_the_provider_is_replayed_for_the_same_key(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _short_at_provider(api, app)
    first = await unload(api, card, 40, key="short-twice")
    again = await unload(api, card, 40, key="short-twice")
    assert first.status_code == again.status_code == 409
    assert again.json() == first.json()


async def test_unload_of_the_whole_balance_leaves_zero(api: httpx.AsyncClient) -> None:
    card = await active_card(api, master=1000.0)
    await set_fees(api, card)
    assert (await topup(api, card, 30)).status_code == 200
    assert (await unload(api, card, 30)).status_code == 200
    assert await card_balance(api, card) == 0
    assert await master_available(api) == Decimal("1000")


async def test_unload_with_the_same_key_is_replayed_once(api: httpx.AsyncClient) -> None:
    card = await active_card(api, master=1000.0)
    await set_fees(api, card)
    assert (await topup(api, card, 100)).status_code == 200
    first = await unload(api, card, 25, key="unload-1")
    again = await unload(api, card, 25, key="unload-1")
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert await card_balance(api, card) == Decimal("75")


async def test_unload_of_a_cancelled_card_is_refused(api: httpx.AsyncClient) -> None:
    card = await active_card(api)
    cancelled = await api.delete(f"/api/v2/cards/{card['Id']}", params={"userId": card["UserId"]})
    assert cancelled.status_code == 200, cancelled.text
    response = await unload(api, card, 1)
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "CARD_CANCELLED"
