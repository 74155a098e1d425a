"""The MOR merchant's transaction listing: its wallet's movements and its cards' purchases,
newest first, with filters."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI

from finplat.mor.access import PREFIX
from tests.cards.funding.steps import active_card, set_fees, topup, unload
from tests.cards.transactions.steps import authorize, settle
from tests.conftest import Tenant
from tests.mor.money_steps import client_for, create_child, fund, fund_child


async def listing(client: httpx.AsyncClient, **params: Any) -> list[dict[str, Any]]:
    response = await client.get(f"{PREFIX}/transactions", params=params)
    assert response.status_code == 200, response.text
    return list(response.json()["Items"])


async def merchant_with_card(api: httpx.AsyncClient) -> dict[str, Any]:
    card = await active_card(api, master=1000.0)
    await set_fees(api, card)
    assert (await topup(api, card, 100)).status_code == 200
    assert (await unload(api, card, 20)).status_code == 200
    held = await authorize(api, card, 30, Mcc="5812")
    assert (await settle(api, card, held["AuthorizationId"], "clear")).status_code == 200
    return card


async def test_the_listing_shows_every_wallet_movement_and_purchase_newest_first(
    mor_tenant: Tenant,
) -> None:
    card = await merchant_with_card(mor_tenant.client)
    items = await listing(mor_tenant.client)
    assert [(i["Type"], i["WalletDirection"], i["Amount"]) for i in items] == [
        ("CARD_PURCHASE", None, 30),
        ("CARD_UNLOAD", "CREDIT", 20),
        ("CARD_TOPUP", "DEBIT", 100),
        ("COMPANY_FUNDING", "CREDIT", 1000),
    ]
    assert items[0]["CardId"] == card["Id"]
    assert items[0]["UserId"] == card["UserId"]
    assert items[-1]["CardId"] is None


async def test_type_filters_keep_only_those_types(mor_tenant: Tenant) -> None:
    await merchant_with_card(mor_tenant.client)
    items = await listing(mor_tenant.client, types=["CARD_TOPUP", "CARD_UNLOAD"])
    assert [i["Type"] for i in items] == ["CARD_UNLOAD", "CARD_TOPUP"]


async def test_card_and_user_filters_keep_only_that_cards_rows(mor_tenant: Tenant) -> None:
    api = mor_tenant.client
    card = await merchant_with_card(api)
    other = await active_card(api, master=0)
    assert (await topup(api, other, 5)).status_code == 200
    by_card = await listing(api, cardId=card["Id"])
    assert {i["CardId"] for i in by_card} == {card["Id"]}
    assert len(by_card) == 3
    by_user = await listing(api, userId=other["UserId"])
    assert [(i["Type"], i["Amount"]) for i in by_user] == [("CARD_TOPUP", 5)]


async def test_an_unknown_card_or_user_filter_is_not_found(mor_tenant: Tenant) -> None:
    for params in ({"cardId": 987654321}, {"userId": 987654321}):
        response = await mor_tenant.client.get(f"{PREFIX}/transactions", params=params)
        assert response.status_code == 404, params


async def test_currency_and_date_filters_bound_the_listing(mor_tenant: Tenant) -> None:
    api = mor_tenant.client
    await fund(api, 10, "EUR")
    await fund(api, 20, "USD")
    assert [i["Currency"] for i in await listing(api, currency="eur")] == ["EUR"]
    assert await listing(api, **{"to": "2000-01-01T00:00:00Z"}) == []
    assert len(await listing(api, **{"from": "2000-01-01T00:00:00Z"})) == 2


async def test_the_listing_pages(mor_tenant: Tenant) -> None:
    for amount in (1, 2, 3):
        await fund(mor_tenant.client, amount)
    first = await mor_tenant.client.get(f"{PREFIX}/transactions", params={"pageSize": 2})
    second = await mor_tenant.client.get(
        f"{PREFIX}/transactions", params={"pageSize": 2, "page": 2}
    )
    assert [i["Amount"] for i in first.json()["Items"]] == [3, 2]
    assert first.json()["HasMore"] is True
    assert [i["Amount"] for i in second.json()["Items"]] == [1]
    assert second.json()["HasMore"] is False


async def test_a_child_funding_shows_as_sent_to_the_parent_and_received_by_the_child(
    app: FastAPI, mor_tenant: Tenant
) -> None:
    await fund(mor_tenant.client, 100)
    child = await create_child(mor_tenant)
    funding = (await fund_child(mor_tenant, child["Id"], 40)).json()
    sent = (await listing(mor_tenant.client))[0]
    assert (sent["Type"], sent["WalletDirection"], sent["Amount"], sent["ReferenceId"]) == (
        "CHILD_FUNDING",
        "DEBIT",
        40,
        funding["Id"],
    )
    async with client_for(app, child["ApiKey"]) as own:
        received = await listing(own)
    assert [(i["Type"], i["WalletDirection"], i["Amount"]) for i in received] == [
        ("PARENT_FUNDING", "CREDIT", 40)
    ]
