"""Steps of the card flows over HTTP, shared by every card test module."""

from __future__ import annotations

from typing import Any

import httpx

from tests.banking.steps import banking_user, default_budget
from tests.onboarding import approved_user, select_tier

PHONE = "+447911123456"
ADDRESS = {
    "Name": "Ada Lovelace",
    "Line1": "12 St James's Square",
    "City": "London",
    "PostalCode": "SW1Y 4JH",
    "Country": "GB",
}


async def approved_card_user(
    api: httpx.AsyncClient, tier: str = "Personal Premium", *, bankprov: bool = False
) -> dict[str, Any]:
    """A user with base KYC approved on `tier`; with `bankprov`, also with an open banking-
    provider account (needed for banking-provider cards; then the tier is Personal Premium)."""
    if bankprov:
        return await banking_user(api)
    user = await approved_user(api)
    await select_tier(api, user["Id"], tier)
    return user


async def user_tier_id(api: httpx.AsyncClient, user_id: int) -> int:
    response = await api.get(f"/api/v2/users/{user_id}")
    assert response.status_code == 200, response.text
    return int(response.json()["TierId"])


async def card_type_id(
    api: httpx.AsyncClient, user: dict[str, Any], provider: str, card_type: str
) -> int:
    """The `CardTypeId` of the user's tier product from `provider` of `card_type`."""
    tier_id = await user_tier_id(api, user["Id"])
    response = await api.get(f"/api/v2/tiers/card-tier/{tier_id}")
    assert response.status_code == 200, response.text
    products = response.json()["CardProducts"]
    return int(
        next(
            p["CardTypeId"]
            for p in products
            if p["Provider"] == provider and p["CardType"] == card_type
        )
    )


async def order_body(
    api: httpx.AsyncClient,
    user: dict[str, Any],
    provider: str = "cardprov",
    card_type: str = "VIRTUAL",
    **overrides: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "UserId": user["Id"],
        "CardTypeId": await card_type_id(api, user, provider, card_type),
        "Phone": PHONE,
    }
    if provider == "bankprov":
        body["BudgetId"] = (await default_budget(api, user["Id"]))["BudgetId"]
    if card_type == "PHYSICAL":
        body["DeliveryAddress"] = ADDRESS
        body["DesignId"] = "classic"
    body.update(overrides)
    return {k: v for k, v in body.items() if v is not ...}


async def order(
    api: httpx.AsyncClient, body: dict[str, Any], key: str | None = None
) -> httpx.Response:
    headers = {"Idempotency-Key": key} if key else {}
    return await api.post("/api/v2/cards", json=body, headers=headers)


async def deliver_callbacks(api: httpx.AsyncClient, card: dict[str, Any]) -> None:
    """The card provider's pending callbacks (its production of the card) arrive now."""
    response = await api.post(
        f"/api/v2/sandbox/cards/{card['Id']}/callbacks", params={"userId": card["UserId"]}
    )
    assert response.status_code == 204, response.text


async def card_detail(api: httpx.AsyncClient, card: dict[str, Any]) -> dict[str, Any]:
    response = await api.get(f"/api/v2/cards/{card['Id']}", params={"userId": card["UserId"]})
    assert response.status_code == 200, response.text
    return dict(response.json())


async def ordered_card(
    api: httpx.AsyncClient,
    user: dict[str, Any],
    provider: str = "cardprov",
    card_type: str = "VIRTUAL",
    *,
    produced: bool = True,
    **overrides: Any,
) -> dict[str, Any]:
    """A card ordered for `user` (201), then produced by the provider: ACTIVE when virtual,
    INACTIVE (awaiting activation) when physical. `produced=False` leaves it PENDING.
    Returns the card detail (or the order response when not produced)."""
    body = await order_body(api, user, provider, card_type, **overrides)
    response = await order(api, body)
    assert response.status_code == 201, response.text
    card = dict(response.json())
    if not produced:
        return card
    await deliver_callbacks(api, card)
    return await card_detail(api, card)


async def control(
    api: httpx.AsyncClient, card: dict[str, Any], action: str, **body: Any
) -> httpx.Response:
    return await api.post(
        f"/api/v2/cards/{card['Id']}/{action}",
        params={"userId": card["UserId"]},
        json=body or None,
    )


async def put_auto_lock(
    api: httpx.AsyncClient, card: dict[str, Any], enabled: bool
) -> httpx.Response:
    return await api.put(
        f"/api/v2/cards/{card['Id']}/auto-lock",
        params={"userId": card["UserId"]},
        json={"enabled": enabled},
    )
