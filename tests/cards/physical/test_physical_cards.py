"""Physical cards: the production and mailing fee quote of a product, and shipping an existing
card that waits for shipment (fee from the company master account to fee revenue)."""

from __future__ import annotations

import httpx

from tests.cards.physical.steps import (
    DOMESTIC_TOTAL,
    INTERNATIONAL_TOTAL,
    fees,
    fund_master,
    master_available,
    pending_physical,
    ship,
)
from tests.cards.steps import ADDRESS, approved_card_user, card_type_id, ordered_card
from tests.onboarding import set_fault


async def test_fee_quote_of_a_physical_product(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    type_id = await card_type_id(api, user, "cardprov", "PHYSICAL")
    response = await fees(api, user["Id"], type_id, "GB")
    assert response.status_code == 200, response.text
    assert response.json() == {
        "CardTypeId": type_id,
        "Country": "GB",
        "ProductionFee": 5,
        "MailingFee": 3,
        "TotalFee": DOMESTIC_TOTAL,
        "Currency": "USD",
        "Provider": "cardprov",
    }
    abroad = (await fees(api, user["Id"], type_id, "FR")).json()
    assert abroad["MailingFee"] == 12
    assert abroad["TotalFee"] == INTERNATIONAL_TOTAL


async def test_fee_quote_of_a_virtual_product_is_409(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    type_id = await card_type_id(api, user, "cardprov", "VIRTUAL")
    response = await fees(api, user["Id"], type_id, "GB")
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "CARD_TYPE_NOT_PHYSICAL"


async def test_fee_quote_of_another_tiers_product_is_409(api: httpx.AsyncClient) -> None:
    premium = await approved_card_user(api, "Personal Premium")
    basic = await approved_card_user(api, "Personal Basic")
    type_id = await card_type_id(api, premium, "cardprov", "PHYSICAL")
    response = await fees(api, basic["Id"], type_id, "GB")
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "CARD_TYPE_NOT_IN_TIER"


async def test_fee_quote_refuses_an_unknown_country(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    type_id = await card_type_id(api, user, "cardprov", "PHYSICAL")
    response = await fees(api, user["Id"], type_id, "XX")
    assert response.status_code == 400, response.text


async def test_shipping_quote_uses_the_cards_own_address(api: httpx.AsyncClient) -> None:
    card = await pending_physical(api)
    response = await api.get(
        f"/api/v2/cards/{card['Id']}/bulk-ship/quote", params={"userId": card["UserId"]}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["CardId"], body["Country"], body["TotalFee"]) == (card["Id"], "GB", 8)
    other = await api.get(
        f"/api/v2/cards/{card['Id']}/bulk-ship/quote",
        params={"userId": card["UserId"], "country": "DE"},
    )
    assert other.json()["TotalFee"] == INTERNATIONAL_TOTAL


async def test_shipping_charges_the_fee_from_the_master_account(api: httpx.AsyncClient) -> None:
    card = await pending_physical(api)
    await fund_master(api, 100)
    response = await ship(api, card, key="ship-1")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["TotalFee"] == DOMESTIC_TOTAL
    assert body["DeliveryAddress"]["PostalCode"] == ADDRESS["PostalCode"]
    assert body["ShippedAt"] is not None
    assert await master_available(api) == 100 - DOMESTIC_TOTAL
    events = (await api.get("/api/v2/events", params={"type": "card.shipped"})).json()["Items"]
    assert [e["Data"]["cardId"] for e in events] == [card["Id"]]


async def test_shipping_to_a_given_address(api: httpx.AsyncClient) -> None:
    card = await pending_physical(api)
    await fund_master(api, 100)
    address = ADDRESS | {"Country": "FR", "City": "Paris", "PostalCode": "75001"}
    response = await ship(api, card, {"DeliveryAddress": address})
    assert response.status_code == 200, response.text
    assert response.json()["DeliveryAddress"]["Country"] == "FR"
    assert response.json()["TotalFee"] == INTERNATIONAL_TOTAL
    assert await master_available(api) == 100 - INTERNATIONAL_TOTAL


async def test_a_produced_card_awaiting_delivery_can_be_shipped(api: httpx.AsyncClient) -> None:
    card = await pending_physical(api, produced=True)
    assert card["Status"] == "INACTIVE"
    await fund_master(api, 100)
    response = await ship(api, card)
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "INACTIVE"


async def test_a_retry_with_the_same_key_ships_and_charges_once(api: httpx.AsyncClient) -> None:
    card = await pending_physical(api)
    await fund_master(api, 100)
    first = await ship(api, card, key="ship-once")
    second = await ship(api, card, key="ship-once")
    assert second.status_code == 200, second.text
    assert second.json() == first.json()
    assert await master_available(api) == 100 - DOMESTIC_TOTAL


async def test_a_card_ships_only_once(api: httpx.AsyncClient) -> None:
    card = await pending_physical(api)
    await fund_master(api, 100)
    assert (await ship(api, card, key="a")).status_code == 200
    again = await ship(api, card, key="b")
    assert again.status_code == 409, again.text
    assert again.json()["Code"] == "CARD_ALREADY_SHIPPED"
    assert await master_available(api) == 100 - DOMESTIC_TOTAL


async def test_a_virtual_card_cannot_be_shipped(api: httpx.AsyncClient) -> None:
    card = await ordered_card(api, await approved_card_user(api))
    await fund_master(api, 100)
    response = await ship(api, card)
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "CARD_NOT_AWAITING_SHIPMENT"


async def test_an_activated_card_cannot_be_shipped(api: httpx.AsyncClient) -> None:
    card = await pending_physical(api, produced=True)
    activated = await api.post(
        f"/api/v2/cards/{card['Id']}/activate", params={"userId": card["UserId"]}
    )
    assert activated.status_code == 200, activated.text
    response = await ship(api, card)
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "CARD_NOT_AWAITING_SHIPMENT"


async def test_too_little_in_the_master_account_ships_nothing(api: httpx.AsyncClient) -> None:
    card = await pending_physical(api)
    await fund_master(api, 1)
    response = await ship(api, card)
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "INSUFFICIENT_FUNDS"
    await fund_master(api, 100)
    assert (await ship(api, card)).status_code == 200


async def test_a_provider_timeout_keeps_the_fee_reserved_until_the_retry(
    api: httpx.AsyncClient,
) -> None:
    card = await pending_physical(api)
    await fund_master(api, 100)
    await set_fault(api, "cardprov", "ship", "timeout")
    lost = await ship(api, card, key="ship-t")
    assert lost.status_code == 503, lost.text
    assert await master_available(api) == 100 - DOMESTIC_TOTAL  # reserved
    done = await ship(api, card, key="ship-t")
    assert done.status_code == 200, done.text
    assert await master_available(api) == 100 - DOMESTIC_TOTAL


async def test_a_provider_refusal_releases_the_fee(api: httpx.AsyncClient) -> None:
    card = await pending_physical(api)
    await fund_master(api, 100)
    await set_fault(api, "cardprov", "ship", "error")
    refused = await ship(api, card, key="ship-r")
    assert 400 <= refused.status_code < 500, refused.text
    assert await master_available(api) == 100
    assert (await ship(api, card, key="ship-r2")).status_code == 200
