"""The card provider's `card.transaction` events through the inbound callback path: once per
provider event id, in any order the network delivers them."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI

from finplat.config import Settings
from finplat.providers import inbound
from tests.cards.funding.steps import card_balance
from tests.cards.transactions.steps import funded_card, provider_card_ref, purchase_event
from tests.conftest import Tenant

D = Decimal


async def _send(
    anonymous: httpx.AsyncClient,
    settings: Settings,
    tenant: Tenant,
    ref: str,
    authorization_id: str,
    type_: str,
    amount_minor: int,
    **ids: Any,
) -> httpx.Response:
    return await anonymous.post(
        "/providers/cardprov/callbacks",
        **purchase_event(
            settings.provider_callback_secret,
            company_id=tenant.company_id,
            card_ref=ref,
            authorization_id=authorization_id,
            type_=type_,
            amount_minor=amount_minor,
            **ids,
        ),
    )


async def _purchase(api: httpx.AsyncClient) -> dict[str, Any]:
    response = await api.get("/api/v2/card-transactions")
    assert response.status_code == 200, response.text
    (only,) = response.json()["Items"]
    return dict(only)


async def test_a_clearing_before_its_authorization_posts_once_and_holds_nothing(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    tenant: Tenant,
) -> None:
    card = await funded_card(api)
    ref = await provider_card_ref(app, card)
    assert (await _send(anonymous, settings, tenant, ref, "net-1", "CLEARING", 3000)).is_success
    assert (
        await _send(anonymous, settings, tenant, ref, "net-1", "AUTHORIZATION", 3000)
    ).is_success
    assert await card_balance(api, card) == D(70)
    purchase = await _purchase(api)
    assert (purchase["Status"], purchase["HeldAmount"]) == ("CLEARED", 0)
    assert [e["Type"] for e in purchase["Events"]] == ["CLEARING", "AUTHORIZATION"]


async def test_a_reversal_before_its_authorization_leaves_nothing_held(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    tenant: Tenant,
) -> None:
    card = await funded_card(api)
    ref = await provider_card_ref(app, card)
    assert (await _send(anonymous, settings, tenant, ref, "net-2", "REVERSAL", 3000)).is_success
    assert (
        await _send(anonymous, settings, tenant, ref, "net-2", "AUTHORIZATION", 3000)
    ).is_success
    assert await card_balance(api, card) == D(100)
    assert (await _purchase(api))["Status"] == "REVERSED"


async def test_a_repeated_callback_is_acknowledged_without_effect(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    tenant: Tenant,
) -> None:
    card = await funded_card(api)
    ref = await provider_card_ref(app, card)
    ids = {"event_id": "evt-dup", "transaction_id": "txn-dup"}
    first = await _send(anonymous, settings, tenant, ref, "net-3", "AUTHORIZATION", 2500, **ids)
    again = await _send(anonymous, settings, tenant, ref, "net-3", "AUTHORIZATION", 2500, **ids)
    assert (first.json()["Duplicate"], again.json()["Duplicate"]) == (False, True)
    assert await card_balance(api, card) == D(75)


async def test_one_provider_event_under_two_callback_ids_is_applied_once(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    tenant: Tenant,
) -> None:
    card = await funded_card(api)
    ref = await provider_card_ref(app, card)
    await _send(anonymous, settings, tenant, ref, "net-4", "AUTHORIZATION", 2500)
    for event_id in ("evt-a", "evt-b"):
        sent = await _send(
            anonymous,
            settings,
            tenant,
            ref,
            "net-4",
            "CLEARING",
            2500,
            event_id=event_id,
            transaction_id="txn-clear-once",
        )
        assert sent.status_code == 200, sent.text
    assert await card_balance(api, card) == D(75)
    assert [e["Type"] for e in (await _purchase(api))["Events"]] == ["AUTHORIZATION", "CLEARING"]


async def test_an_event_in_another_currency_than_the_cards_is_refused(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    tenant: Tenant,
) -> None:
    card = await funded_card(api)
    ref = await provider_card_ref(app, card)
    body = purchase_event(
        settings.provider_callback_secret,
        company_id=tenant.company_id,
        card_ref=ref,
        authorization_id="net-5",
        type_="AUTHORIZATION",
        amount_minor=100,
    )
    body["content"] = body["content"].replace(b'"USD"', b'"EUR"')
    body["headers"] = {
        "content-type": "application/json",
        **inbound.signature_headers(settings.provider_callback_secret, body["content"]),
    }
    response = await anonymous.post("/providers/cardprov/callbacks", **body)
    assert response.status_code == 400, response.text
    assert response.json()["Code"] == "MALFORMED_CALLBACK"
    assert await card_balance(api, card) == D(100)
