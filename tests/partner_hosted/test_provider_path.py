"""Partner-hosted purchases through the card provider's own path: its real-time request is
decided by the partner, and its `card.transaction` callbacks reach the partner once per
provider event id."""

from __future__ import annotations

from decimal import Decimal as D

import httpx
from fastapi import FastAPI

from finplat.config import Settings
from tests.cards.funding.steps import active_card
from tests.cards.transactions.steps import ask_in_real_time, provider_card_ref, purchase_event
from tests.conftest import Tenant
from tests.partner_hosted.steps import deliver, deliveries, partner_hosted


async def test_the_providers_real_time_request_is_decided_by_the_partner(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    tenant: Tenant,
) -> None:
    card = await active_card(api, master=0)
    ref = await provider_card_ref(app, card)
    payload = {
        "companyId": tenant.company_id,
        "authorizationId": "net-ph-1",
        "cardId": ref,
        "amountMinor": 2000,
        "currency": "USD",
        "merchant": "Network Store",
    }
    async with partner_hosted(api) as (partner, _):
        partner.default_balance = D(15)
        declined = await ask_in_real_time(anonymous, settings.provider_callback_secret, payload)
        assert declined.status_code == 200, declined.text
        assert (declined.json()["Approved"], declined.json()["DeclineReason"]) == (
            False,
            "INSUFFICIENT_FUNDS",
        )
        partial = await ask_in_real_time(
            anonymous,
            settings.provider_callback_secret,
            payload | {"authorizationId": "net-ph-2", "partialApproval": True},
        )
    assert partial.json()["Approved"] is True
    assert partial.json()["ApprovedAmountMinor"] == 1500
    assert partial.json()["ResponseCode"] == "10"


async def test_a_provider_event_sent_twice_reaches_the_partner_once(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    tenant: Tenant,
) -> None:
    card = await active_card(api, master=0)
    ref = await provider_card_ref(app, card)
    async with partner_hosted(api) as (partner, _):
        payload = {
            "companyId": tenant.company_id,
            "authorizationId": "net-ph-3",
            "cardId": ref,
            "amountMinor": 2000,
            "currency": "USD",
            "merchant": "Network Store",
        }
        assert (
            await ask_in_real_time(anonymous, settings.provider_callback_secret, payload)
        ).json()["Approved"] is True
        clearing = purchase_event(
            settings.provider_callback_secret,
            company_id=tenant.company_id,
            card_ref=ref,
            authorization_id="net-ph-3",
            type_="CLEARING",
            amount_minor=2000,
            transaction_id="net-ph-3-clear",
        )
        for _ in range(2):
            sent = await anonymous.post("/providers/cardprov/callbacks", **clearing)
            assert sent.status_code in (200, 202, 204), sent.text
        assert await deliver(app) == 1
        user = (await api.get(f"/api/v2/users/{card['UserId']}")).json()["ExternalUserId"]
        assert partner.balance(user) == D(980)
    assert [d.operation for d in await deliveries(app)] == ["clearings"]


async def test_a_purchase_the_provider_authorized_without_asking_is_held_at_the_partner(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    tenant: Tenant,
) -> None:
    card = await active_card(api, master=0)
    ref = await provider_card_ref(app, card)
    async with partner_hosted(api) as (partner, _):
        event = purchase_event(
            settings.provider_callback_secret,
            company_id=tenant.company_id,
            card_ref=ref,
            authorization_id="net-ph-4",
            type_="AUTHORIZATION",
            amount_minor=1200,
        )
        sent = await anonymous.post("/providers/cardprov/callbacks", **event)
        assert sent.status_code in (200, 202, 204), sent.text
        assert await deliver(app) == 1
        user = (await api.get(f"/api/v2/users/{card['UserId']}")).json()["ExternalUserId"]
        assert partner.available(user) == D(988)
    [adjustment] = await deliveries(app)
    assert '"Reason":"STAND_IN_APPROVAL"' in adjustment.body
