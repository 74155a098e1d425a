"""Steps of the MOR card flows over HTTP (`/api/v2/mor/public`)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx

from finplat.mor.access import PREFIX
from tests.cards.funding.steps import fund_master, set_fees
from tests.cards.steps import approved_card_user, deliver_callbacks, order_body


async def batch(
    api: httpx.AsyncClient, orders: list[dict[str, Any]], key: str | None = None
) -> httpx.Response:
    headers = {"Idempotency-Key": key} if key else {}
    return await api.post(f"{PREFIX}/cards/batch", json={"Cards": orders}, headers=headers)


async def mor_card(api: httpx.AsyncClient, *, master: float = 1000.0) -> dict[str, Any]:
    """An ACTIVE card ordered through the MOR batch for a new approved user (its assignee),
    fees zero, the merchant's wallet holding `master`."""
    user = await approved_card_user(api)
    response = await batch(api, [await order_body(api, user)])
    assert response.status_code == 200, response.text
    item = response.json()["Items"][0]
    assert item["Result"] == "CREATED", item
    card = item["Card"]
    await deliver_callbacks(api, card)
    await set_fees(api, card)
    if master:
        await fund_master(api, master)
    return await read_card(api, card["Id"])


async def read_card(api: httpx.AsyncClient, card_id: int) -> dict[str, Any]:
    response = await api.get(f"{PREFIX}/cards/{card_id}")
    assert response.status_code == 200, response.text
    return dict(response.json())


async def fund(
    api: httpx.AsyncClient, card_id: int, amount: float, key: str | None = None
) -> httpx.Response:
    headers = {"Idempotency-Key": key} if key else {}
    return await api.post(
        f"{PREFIX}/cards/{card_id}/fund", json={"Amount": amount}, headers=headers
    )


async def balance(api: httpx.AsyncClient, card_id: int) -> Decimal:
    return Decimal(str((await read_card(api, card_id))["AvailableBalance"]))


async def assign(api: httpx.AsyncClient, card_id: int, user_id: int) -> httpx.Response:
    return await api.post(f"{PREFIX}/cards/{card_id}/assign", json={"UserId": user_id})


async def unassign(api: httpx.AsyncClient, card_id: int) -> httpx.Response:
    return await api.post(f"{PREFIX}/cards/{card_id}/unassign")


async def ask_load(
    api: httpx.AsyncClient, card: dict[str, Any], amount: float, user_id: int | None = None
) -> httpx.Response:
    return await api.post(
        f"{PREFIX}/load-requests",
        json={
            "UserId": user_id or card["AssignedUserId"],
            "CardId": card["Id"],
            "Amount": amount,
            "Note": "Team lunch",
        },
    )


async def load_request(api: httpx.AsyncClient, card: dict[str, Any], amount: float) -> int:
    response = await ask_load(api, card, amount)
    assert response.status_code == 201, response.text
    return int(response.json()["Id"])


async def approve(api: httpx.AsyncClient, request_id: int) -> httpx.Response:
    return await api.post(f"{PREFIX}/load-requests/{request_id}/approve")
