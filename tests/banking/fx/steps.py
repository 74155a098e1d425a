"""Steps of the quote and FX trade flows over HTTP."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI

from finplat.db.unit_of_work import unit_of_work
from finplat.transactions import refresh as transaction_refresh
from finplat.transactions import service as transactions


async def quote(
    api: httpx.AsyncClient,
    user: dict[str, Any],
    *,
    sell: str = "EUR",
    buy: str = "USD",
    amount: float = 100,
    side: str = "SELL",
    path: str = "/api/v2/banking/quotations",
    user_id: int | None = -1,
    **body: Any,
) -> httpx.Response:
    """Ask for a quote (`user_id` -1: the user's own id; None: no `userId` at all)."""
    params = {} if user_id is None else {"userId": user["Id"] if user_id == -1 else user_id}
    return await api.post(
        path,
        params=params,
        json={
            "AccountId": user["AccountId"],
            "SellCurrency": sell,
            "BuyCurrency": buy,
            "Amount": amount,
            "FixedSide": side,
            **body,
        },
    )


async def quoted(api: httpx.AsyncClient, user: dict[str, Any], **options: Any) -> dict[str, Any]:
    response = await quote(api, user, **options)
    assert response.status_code == 200, response.text
    body = dict(response.json())
    assert body["IsAvailable"] is True, body
    return body


async def execute(
    api: httpx.AsyncClient,
    user: dict[str, Any],
    quote_id: str,
    *,
    key: str | None = None,
    **body: Any,
) -> httpx.Response:
    headers = {"Idempotency-Key": key} if key else {}
    return await api.post(
        "/api/v2/banking/trades/execute",
        params={"userId": user["Id"]},
        json={"QuoteId": quote_id, "AccountId": user["AccountId"], **body},
        headers=headers,
    )


async def refresh(app: FastAPI, company_id: int, transaction_id: int) -> dict[str, Any]:
    """Ask the provider about a transaction (as transaction detail and reconciliation do);
    returns its status and metadata afterwards."""
    async with unit_of_work(app.state.session_factory) as session:
        tx = await transactions.get(session, company_id=company_id, transaction_id=transaction_id)
        await transaction_refresh.refresh(session, app.state.providers, tx)
    async with app.state.session_factory() as session:
        tx = await transactions.get(session, company_id=company_id, transaction_id=transaction_id)
        return {
            "Status": tx.status,
            "StatusReason": tx.status_reason,
            "ProviderReference": tx.provider_reference,
            "Metadata": transactions.metadata_of(tx),
        }
