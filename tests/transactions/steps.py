"""Steps shared by the transactions and reconciliation tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.transactions import refresh
from finplat.transactions import service as transactions
from finplat.transactions.kinds import TransactionStatus, TransactionType
from finplat.transactions.models import Transaction


@contextmanager
def refresher_for(type_: TransactionType, fn: refresh.Refresher) -> Iterator[None]:
    """Register `fn` as the refresher of `type_` for the block, then put back whatever the
    domains registered (loaded first, so a domain module imported later cannot replace it)."""
    refresh.load()
    previous = refresh._REFRESHERS.get(type_)
    refresh.refresher(type_)(fn)
    try:
        yield
    finally:
        if previous is None:
            refresh._REFRESHERS.pop(type_, None)
        else:
            refresh._REFRESHERS[type_] = previous


async def pending_transaction(
    session: AsyncSession,
    *,
    company_id: int,
    user_id: int,
    type_: TransactionType = TransactionType.MASTER_TRANSFER,
    amount_minor: int = 1234,
    currency: str = "EUR",
    **fields: Any,
) -> Transaction:
    """A PENDING transaction recorded directly (committed: the app sees it)."""
    transaction = await transactions.record(
        session,
        company_id=company_id,
        user_id=user_id,
        type_=type_,
        status=TransactionStatus.PENDING,
        provider="bankprov",
        amount_minor=amount_minor,
        currency=currency,
        **fields,
    )
    await session.commit()
    return transaction


async def transaction(api: httpx.AsyncClient, transaction_id: int, **params: Any) -> httpx.Response:
    return await api.get(f"/api/v2/transactions/{transaction_id}", params=params)


async def listing(api: httpx.AsyncClient, **params: Any) -> dict[str, Any]:
    response = await api.get("/api/v2/transactions", params=params)
    assert response.status_code == 200, response.text
    return dict(response.json())
