"""Steps of card purchases over HTTP: the sandbox network and the provider's callbacks."""

from __future__ import annotations

import json
import uuid
from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import select

from finplat.cards.models import Card
from finplat.providers import inbound
from tests.callbacks import signed
from tests.cards.funding.steps import active_card, card_balance, set_fees, topup


async def funded_card(api: httpx.AsyncClient, amount: float = 100) -> dict[str, Any]:
    card = await active_card(api, master=1000.0)
    await set_fees(api, card)
    assert (await topup(api, card, amount)).status_code == 200
    assert await card_balance(api, card) == Decimal(str(amount))
    return card


async def authorize(
    api: httpx.AsyncClient, card: dict[str, Any], amount: float | str, **extra: Any
) -> dict[str, Any]:
    response = await api.post(
        f"/api/v2/sandbox/cards/{card['Id']}/authorizations",
        params={"userId": card["UserId"]},
        json={"Amount": amount, "Currency": "USD", "Merchant": "Coffee Shop", **extra},
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def settle(
    api: httpx.AsyncClient,
    card: dict[str, Any],
    authorization_id: str,
    action: str,
    amount: float | None = None,
) -> httpx.Response:
    return await api.post(
        f"/api/v2/sandbox/cards/{card['Id']}/authorizations/{authorization_id}/{action}",
        params={"userId": card["UserId"]},
        json=None if amount is None else {"Amount": amount},
    )


async def read(api: httpx.AsyncClient, txn_id: int) -> dict[str, Any]:
    response = await api.get(f"/api/v2/card-transactions/{txn_id}")
    assert response.status_code == 200, response.text
    return dict(response.json())


async def provider_card_ref(app: FastAPI, card: dict[str, Any]) -> str:
    async with app.state.session_factory() as session:
        ref = (
            await session.execute(select(Card.provider_card_id).where(Card.id == card["Id"]))
        ).scalar_one()
    assert ref is not None
    return str(ref)


def purchase_event(
    secret: str,
    *,
    company_id: int,
    card_ref: str,
    authorization_id: str,
    type_: str,
    amount_minor: int,
    transaction_id: str | None = None,
    event_id: str | None = None,
) -> dict[str, Any]:
    """A `card.transaction` callback as the card provider signs and sends it."""
    return signed(
        secret,
        company_id=company_id,
        type_="card.transaction",
        event_id=event_id or f"evt_{uuid.uuid4().hex}",
        data={
            "cardId": card_ref,
            "transactionId": transaction_id or f"txn_{uuid.uuid4().hex[:24]}",
            "authorizationId": authorization_id,
            "type": type_,
            "status": "PENDING",
            "amountMinor": amount_minor,
            "currency": "USD",
            "merchant": "Network Store",
            "timestamp": 1764158400000,
        },
    )


async def ask_in_real_time(
    anonymous: httpx.AsyncClient, secret: str, payload: dict[str, Any]
) -> httpx.Response:
    """The card provider's real-time authorization request, signed as it signs callbacks."""
    body = json.dumps(payload).encode()
    headers = {"content-type": "application/json", **inbound.signature_headers(secret, body)}
    return await anonymous.post("/providers/cardprov/authorizations", content=body, headers=headers)
