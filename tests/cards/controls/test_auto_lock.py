"""Auto-lock that acts: with it on, the card locks itself after each approved purchase; the
next purchase is declined `AUTO_LOCKED` until the holder enables the card again."""

from __future__ import annotations

from typing import Any

import httpx

from tests.cards.steps import approved_card_user, control, ordered_card, put_auto_lock


async def funded_card(api: httpx.AsyncClient, **order: Any) -> dict[str, Any]:
    card = await ordered_card(api, await approved_card_user(api), **order)
    funded = await api.post(
        "/api/v2/sandbox/company/funding", json={"Currency": "USD", "Amount": 500}
    )
    assert funded.status_code == 200, funded.text
    topup = await api.post(
        "/api/v2/cards/topup", json={"CardId": card["Id"], "Token": "USD", "Value": 100}
    )
    assert topup.status_code == 200, topup.text
    return card


async def purchase(api: httpx.AsyncClient, card: dict[str, Any], amount: float = 5) -> Any:
    response = await api.post(
        f"/api/v2/sandbox/cards/{card['Id']}/authorizations",
        params={"userId": card["UserId"]},
        json={"Amount": amount, "Currency": "USD", "Merchant": "Coffee Shop"},
    )
    assert response.status_code == 200, response.text
    return response.json()


async def auto_lock(api: httpx.AsyncClient, card: dict[str, Any], enabled: bool) -> Any:
    response = await put_auto_lock(api, card, enabled)
    assert response.status_code == 200, response.text
    return response.json()


async def test_without_auto_lock_purchases_go_through(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    assert (await purchase(api, card))["Approved"] is True
    assert (await purchase(api, card))["Approved"] is True


async def test_auto_lock_declines_the_purchase_after_an_approved_one(
    api: httpx.AsyncClient,
) -> None:
    card = await funded_card(api)
    assert (await auto_lock(api, card, True))["AutoLockEnabled"] is True
    assert (await purchase(api, card))["Approved"] is True
    declined = await purchase(api, card)
    assert declined["Status"] == "DECLINED"
    assert declined["DeclineReason"] == "CARD_AUTO_LOCKED"


async def test_enable_unlocks_an_auto_locked_card_for_one_purchase(
    api: httpx.AsyncClient,
) -> None:
    card = await funded_card(api)
    await auto_lock(api, card, True)
    await purchase(api, card)
    enabled = await control(api, card, "enable")
    assert enabled.status_code == 200, enabled.text
    assert enabled.json()["Status"] == "ACTIVE"
    assert (await purchase(api, card))["Approved"] is True
    assert (await purchase(api, card))["DeclineReason"] == "CARD_AUTO_LOCKED"


async def test_turning_auto_lock_off_unlocks_the_card(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    on = await api.post(
        f"/api/v2/cards/{card['Id']}/auto-lock/enable", params={"userId": card["UserId"]}
    )
    assert on.status_code == 200, on.text
    await purchase(api, card)
    off = await api.post(
        f"/api/v2/cards/{card['Id']}/auto-lock/disable", params={"userId": card["UserId"]}
    )
    assert off.status_code == 200, off.text
    assert off.json()["AutoLockEnabled"] is False
    assert (await purchase(api, card))["Approved"] is True
    assert (await purchase(api, card))["Approved"] is True


async def test_auto_lock_chosen_at_order_acts(api: httpx.AsyncClient) -> None:
    card = await funded_card(api, AutoLockEnabled=True)
    assert card["AutoLockEnabled"] is True
    assert (await purchase(api, card))["Approved"] is True
    assert (await purchase(api, card))["DeclineReason"] == "CARD_AUTO_LOCKED"


async def test_an_auto_locked_decline_moves_no_money(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    await auto_lock(api, card, True)
    await purchase(api, card, 10)
    before = (
        await api.get(f"/api/v2/cards/{card['Id']}", params={"userId": card["UserId"]})
    ).json()
    await purchase(api, card, 10)
    after = (await api.get(f"/api/v2/cards/{card['Id']}", params={"userId": card["UserId"]})).json()
    assert after["AvailableBalance"] == before["AvailableBalance"]
