"""Physical-card steps over HTTP: fee quotes, a card waiting for shipment, shipping it, and the
company master account that pays for it."""

from __future__ import annotations

from typing import Any

import httpx

from tests.cards.steps import approved_card_user, ordered_card

# The sandbox card provider's fees (USD): production 5.00; mailing 3.00 to GB/US, else 12.00.
DOMESTIC_TOTAL = 8.0
INTERNATIONAL_TOTAL = 17.0


async def fees(api: httpx.AsyncClient, user_id: int, type_id: int, country: str) -> httpx.Response:
    return await api.get(
        "/api/v2/cards/physical-card-fees",
        params={"userId": user_id, "country": country, "cardTypeId": type_id},
    )


async def fund_master(api: httpx.AsyncClient, amount: float) -> None:
    response = await api.post(
        "/api/v2/sandbox/company/funding", json={"Currency": "USD", "Amount": amount}
    )
    assert response.status_code == 200, response.text


async def master_available(api: httpx.AsyncClient) -> float:
    balances = (await api.get("/api/v2/company/balances")).json()["Balances"]
    return float(next(b["Available"] for b in balances if b["Currency"] == "USD"))


async def pending_physical(api: httpx.AsyncClient, *, produced: bool = False) -> dict[str, Any]:
    user = await approved_card_user(api)
    return await ordered_card(api, user, "cardprov", "PHYSICAL", produced=produced)


async def ship(
    api: httpx.AsyncClient, card: dict[str, Any], body: Any = None, key: str | None = None
) -> httpx.Response:
    return await api.post(
        f"/api/v2/cards/{card['Id']}/bulk-ship",
        params={"userId": card["UserId"]},
        json=body,
        headers={"Idempotency-Key": key} if key else {},
    )
