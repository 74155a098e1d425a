"""A real card provider reports the MID in its `card.transaction` callback (`mid`, optional):
the purchase carries it and earns points at the merchant."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
from fastapi import FastAPI

from finplat.config import Settings
from finplat.providers import inbound
from tests.callbacks import signed
from tests.cards.transactions.steps import provider_card_ref
from tests.conftest import Tenant
from tests.loyalty.steps import member_card, merchant, new_mid, points, program


def _event(
    settings: Settings, tenant: Tenant, ref: str, auth: str, type_: str, **extra: Any
) -> dict[str, Any]:
    return signed(
        settings.provider_callback_secret,
        company_id=tenant.company_id,
        type_="card.transaction",
        event_id=f"evt_{uuid.uuid4().hex}",
        data={
            "cardId": ref,
            "transactionId": f"txn_{uuid.uuid4().hex[:24]}",
            "authorizationId": auth,
            "type": type_,
            "status": "PENDING",
            "amountMinor": 1500,
            "currency": "USD",
            "merchant": "Network Store",
            "timestamp": 1764158400000,
            **extra,
        },
    )


async def test_a_provider_reported_mid_matches_the_merchant(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    tenant: Tenant,
) -> None:
    owner = await program(api, PointsPerUnit=1)
    mid = new_mid()
    await merchant(api, owner["Id"], mid)
    card = await member_card(api)
    ref = await provider_card_ref(app, card)
    auth = f"auth_{uuid.uuid4().hex[:16]}"
    for type_, extra in (("AUTHORIZATION", {"mid": mid}), ("CLEARING", {})):
        response = await anonymous.post(
            "/providers/cardprov/callbacks", **_event(settings, tenant, ref, auth, type_, **extra)
        )
        assert response.status_code == 200, response.text
    assert await points(api, card["UserId"]) == 15
    (purchase,) = (await api.get("/api/v2/card-transactions")).json()["Items"]
    assert purchase["Mid"] == mid


async def test_the_mid_of_a_real_time_request_matches_the_merchant(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    tenant: Tenant,
) -> None:
    owner = await program(api, PointsPerTransaction=7)
    mid = new_mid()
    await merchant(api, owner["Id"], mid)
    card = await member_card(api)
    ref = await provider_card_ref(app, card)
    auth = f"auth_{uuid.uuid4().hex[:16]}"
    body = json.dumps(
        {
            "companyId": tenant.company_id,
            "authorizationId": auth,
            "cardId": ref,
            "amountMinor": 1500,
            "currency": "USD",
            "merchant": "Network Store",
            "mid": mid,
        }
    ).encode()
    asked = await anonymous.post(
        "/providers/cardprov/authorizations",
        content=body,
        headers={
            "content-type": "application/json",
            **inbound.signature_headers(settings.provider_callback_secret, body),
        },
    )
    assert (asked.status_code, asked.json()["Approved"]) == (200, True), asked.text
    cleared = await anonymous.post(
        "/providers/cardprov/callbacks", **_event(settings, tenant, ref, auth, "CLEARING")
    )
    assert cleared.status_code == 200, cleared.text
    assert await points(api, card["UserId"]) == 7
