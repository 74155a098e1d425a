"""Steps of the budget-transfer flows over HTTP."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI

from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.transactions import refresh
from finplat.transactions import service as transactions


async def transfer(
    api: httpx.AsyncClient,
    user: dict[str, Any],
    source_budget_id: str,
    amount: Any,
    currency: str = "EUR",
    *,
    headers: dict[str, str] | None = None,
    **body: Any,
) -> httpx.Response:
    return await api.post(
        f"/api/v2/banking/budgets/{source_budget_id}/transfer",
        params={"userId": user["Id"]},
        json={
            "AccountId": user["AccountId"],
            "Amount": float(Decimal(str(amount))),
            "Currency": currency,
            **body,
        },
        headers=headers or {},
    )


async def master_available(api: httpx.AsyncClient, currency: str) -> Decimal:
    response = await api.get("/api/v2/company/balances")
    assert response.status_code == 200, response.text
    for balance in response.json()["Balances"]:
        if balance["Currency"] == currency:
            return Decimal(str(balance["Available"]))
    return Decimal(0)


async def run_refresher(app: FastAPI, company_id: int, transaction_id: int) -> None:
    """What `GET /api/v2/transactions/{id}` and reconciliation do for a PENDING transaction."""
    async with unit_of_work(app.state.session_factory) as session:
        bind_company(session, company_id)
        tx = await transactions.get(session, company_id=company_id, transaction_id=transaction_id)
        assert await refresh.refresh(session, app.state.providers, tx)


async def transaction_status(app: FastAPI, company_id: int, transaction_id: int) -> str:
    async with app.state.session_factory() as session:
        tx = await transactions.get(session, company_id=company_id, transaction_id=transaction_id)
        return str(tx.status)
