"""Steps of the crypto flows toward the card provider over HTTP (`bankprov-to-cardprov` and
crypto card loads)."""

from __future__ import annotations

from typing import Any

import httpx

from tests.banking.steps import credit, default_budget
from tests.cards.funding.steps import fund_master, topup
from tests.cards.steps import approved_card_user, ordered_card
from tests.crypto.steps import payin_address, send

CARDPROV = "/api/v2/crypto-virtual-accounts/bankprov-to-cardprov"
CARD_LOADS = "/api/v2/card-loads/crypto"


async def funded_card_user(
    api: httpx.AsyncClient, amount: str = "1000", currency: str = "EUR"
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A user with an open banking account whose default budget holds `amount`, and an
    active card-provider card: (user, budget, card)."""
    user = await approved_card_user(api, bankprov=True)
    budget = await default_budget(api, user["Id"])
    await credit(api, user["Id"], budget["BudgetId"], amount, currency)
    card = await ordered_card(api, user)
    return user, budget, card


async def cardprov_quote(
    api: httpx.AsyncClient,
    user_id: int,
    budget_id: str,
    card_id: int,
    amount: str = "100",
    fiat: str = "EUR",
) -> dict[str, Any]:
    response = await api.post(
        f"{CARDPROV}/quote",
        params={"userId": user_id},
        json={"BudgetId": budget_id, "FiatCurrency": fiat, "Amount": amount, "CardId": card_id},
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


async def decide(
    api: httpx.AsyncClient, user_id: int, quote_id: str, decision: str, key: str | None = None
) -> httpx.Response:
    return await api.post(
        f"{CARDPROV}/funds-decision",
        params={"userId": user_id},
        json={"QuoteId": quote_id, "Decision": decision},
        headers={"Idempotency-Key": key} if key else {},
    )


async def execute(
    api: httpx.AsyncClient, user_id: int, quote_id: str, key: str | None = None
) -> httpx.Response:
    return await api.post(
        CARDPROV,
        params={"userId": user_id},
        json={"QuoteId": quote_id},
        headers={"Idempotency-Key": key} if key else {},
    )


async def settle_delivery(
    api: httpx.AsyncClient, user_id: int, transfer_id: str, outcome: str
) -> dict[str, Any]:
    response = await api.post(
        f"/api/v2/sandbox/crypto/bankprov-to-cardprov/{transfer_id}/settle",
        params={"userId": user_id},
        json={"Outcome": outcome},
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def crypto_card_user(
    api: httpx.AsyncClient, amount: str = "100", currency: str = "USDC", chain_id: int = 1
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A user whose crypto balance holds `amount` of `currency` (one final deposit), with an
    active card-provider card: (user, card)."""
    user = await approved_card_user(api)
    address = await payin_address(api, user["Id"], currency, chain_id)
    deposit = await send(api, address["Address"], amount, currency, chain_id, confirmations=500)
    assert deposit["Status"] == "CREDITED", deposit
    card = await ordered_card(api, user)
    return user, card


async def card_load(
    api: httpx.AsyncClient,
    user_id: int,
    card_id: int,
    amount: str | float = "50",
    currency: str = "USDC",
    chain_id: int = 1,
    key: str | None = "load-1",
) -> httpx.Response:
    return await api.post(
        CARD_LOADS,
        params={"userId": user_id},
        json={
            "CardId": card_id,
            "Amount": amount,
            "crypto_currency": currency,
            "chain_id": chain_id,
        },
        headers={"Idempotency-Key": key} if key else {},
    )


async def confirm_load(
    api: httpx.AsyncClient, user_id: int, load_id: str, outcome: str = "CONFIRMED"
) -> dict[str, Any]:
    response = await api.post(
        f"/api/v2/sandbox/crypto/card-loads/{load_id}/confirm",
        params={"userId": user_id},
        json={"Outcome": outcome},
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


CARD_TO_BANK = "/api/v2/crypto-virtual-accounts/cardprov-to-bankprov"


async def loaded_card_user(
    api: httpx.AsyncClient, card_amount: str = "300"
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A user with an open banking account (its default budget holding 1000 EUR) and an
    active card-provider card topped up with `card_amount` USD: (user, budget, card)."""
    user, budget, card = await funded_card_user(api)
    await fund_master(api, 10_000.0)
    response = await topup(api, card, card_amount)
    assert response.status_code in (200, 201), response.text
    return user, budget, card


async def card_to_bank_quote(
    api: httpx.AsyncClient,
    user_id: int,
    card_id: int,
    budget_id: str,
    amount: str = "100",
    fiat: str = "EUR",
) -> dict[str, Any]:
    response = await api.post(
        f"{CARD_TO_BANK}/quote",
        params={"userId": user_id},
        json={"CardId": card_id, "Amount": amount, "BudgetId": budget_id, "FiatCurrency": fiat},
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


async def card_to_bank_decide(
    api: httpx.AsyncClient, user_id: int, quote_id: str, decision: str, key: str | None = None
) -> httpx.Response:
    return await api.post(
        f"{CARD_TO_BANK}/funds-decision",
        params={"userId": user_id},
        json={"QuoteId": quote_id, "Decision": decision},
        headers={"Idempotency-Key": key} if key else {},
    )


async def card_to_bank(
    api: httpx.AsyncClient, user_id: int, quote_id: str, key: str | None = None
) -> httpx.Response:
    return await api.post(
        CARD_TO_BANK,
        params={"userId": user_id},
        json={"QuoteId": quote_id},
        headers={"Idempotency-Key": key} if key else {},
    )


async def settle_card_to_bank(
    api: httpx.AsyncClient, user_id: int, transfer_id: str, outcome: str
) -> dict[str, Any]:
    response = await api.post(
        f"/api/v2/sandbox/crypto/cardprov-to-bankprov/{transfer_id}/settle",
        params={"userId": user_id},
        json={"Outcome": outcome},
    )
    assert response.status_code == 200, response.text
    return dict(response.json())
