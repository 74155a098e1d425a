"""Asking the provider about a pending transaction and applying its answer.

Each money-moving domain registers how to refresh its own transaction type
(`@refresher(TransactionType.PAYOUT)`); `GET /api/v2/transactions/{id}` and reconciliation
both go through `refresh`. A refresher calls the provider through `commit_then_call` (which
commits first: no lock is held while waiting), then settles the transaction and its ledger
reservation in the session, flushing only.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.providers.registry import Providers
from finplat.transactions.kinds import TransactionStatus, TransactionType
from finplat.transactions.models import Transaction

Refresher = Callable[[AsyncSession, Providers, Transaction], Awaitable[None]]
_REFRESHERS: dict[TransactionType, Refresher] = {}

# Modules that register refreshers (imported on first use, like callback handlers).
REFRESHER_MODULES: tuple[str, ...] = (
    "finplat.banking.payouts.refresh",
    "finplat.banking.fx.refresh",
    "finplat.banking.transfers.refresh",
    "finplat.payments.collections.refresh",
)


def refresher(type_: TransactionType) -> Callable[[Refresher], Refresher]:
    def register(fn: Refresher) -> Refresher:
        _REFRESHERS[type_] = fn
        return fn

    return register


def load() -> None:
    for name in REFRESHER_MODULES:
        importlib.import_module(name)


async def refresh(session: AsyncSession, providers: Providers, transaction: Transaction) -> bool:
    """Refresh a pending transaction from its provider; True when a refresher ran."""
    if transaction.status != TransactionStatus.PENDING.value:
        return False
    load()
    fn = _REFRESHERS.get(TransactionType(transaction.type))
    if fn is None:
        return False
    await fn(session, providers, transaction)
    return True
