"""The secure widget URL: short-lived, single use, never the card data in the API."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

from finplat.kit.clock import utcnow
from tests.cards.steps import approved_card_user, ordered_card


async def test_widget_returns_a_short_lived_url(api: httpx.AsyncClient) -> None:
    card = await ordered_card(api, await approved_card_user(api))
    response = await api.get(
        f"/api/v2/cards/{card['Id']}/widget", params={"userId": card["UserId"]}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert "/sandbox/cards/widget#token=sbx_widget_" in body["Url"]
    expires = datetime.fromisoformat(body["ExpiresAt"].replace("Z", "+00:00"))
    if expires.tzinfo is None:
        expires = expires.replace(tzinfo=UTC)
    assert timedelta(seconds=50) < expires - utcnow() <= timedelta(seconds=60)


async def test_widget_of_a_pending_card_is_409(api: httpx.AsyncClient) -> None:
    card = await ordered_card(api, await approved_card_user(api), produced=False)
    response = await api.get(
        f"/api/v2/cards/{card['Id']}/widget", params={"userId": card["UserId"]}
    )
    assert response.status_code == 409


async def test_a_used_or_unknown_token_is_refused(api: httpx.AsyncClient) -> None:
    response = await api.post("/sandbox/cards/widget/reveal", json={"Token": "sbx_widget_nope"})
    assert response.status_code == 404
    assert response.json()["Code"] == "WIDGET_TOKEN_INVALID"
