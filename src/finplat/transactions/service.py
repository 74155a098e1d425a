"""Transactions: the business record of each money movement of a user.

Rules (spec, "Transaction (single)" and Errors): a transaction reports `UserId`,
`RelatedCardTransactionId`, `FeeAmount`, `FeeCurrency` and parsed `Metadata`; a pending or
uncertain provider outcome stays `PENDING` (never reported completed) until the provider's
answer settles it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.errors import NotFound
from finplat.kit.clock import utcnow
from finplat.transactions.kinds import FINAL_STATUSES, TransactionStatus, TransactionType
from finplat.transactions.models import Transaction
from finplat.transactions.repository import TransactionRepository


class TransactionNotFound(NotFound):
    code = "TRANSACTION_NOT_FOUND"
    message = "No transaction with that id."


async def record(
    session: AsyncSession,
    *,
    company_id: int,
    user_id: int,
    type_: TransactionType,
    status: TransactionStatus,
    provider: str,
    amount_minor: int,
    currency: str,
    budget_id: str | None = None,
    fee_minor: int | None = None,
    fee_currency: str | None = None,
    provider_reference: str | None = None,
    provider_key: str | None = None,
    ledger_pending_id: int | None = None,
    related_card_transaction_id: int | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Transaction:
    now = utcnow()
    return await TransactionRepository(session, company_id).add(
        Transaction(
            user_id=user_id,
            type=type_.value,
            status=status.value,
            provider=provider,
            amount_minor=amount_minor,
            currency=currency,
            fee_minor=fee_minor,
            fee_currency=fee_currency,
            budget_id=budget_id,
            provider_reference=provider_reference,
            provider_key=provider_key,
            ledger_pending_id=ledger_pending_id,
            related_card_transaction_id=related_card_transaction_id,
            details=json.dumps(dict(metadata or {}), sort_keys=True, default=str),
            completed_at=now if status is TransactionStatus.COMPLETED else None,
            created_at=now,
            updated_at=now,
        )
    )


async def get(session: AsyncSession, *, company_id: int, transaction_id: int) -> Transaction:
    found = await TransactionRepository(session, company_id).get(transaction_id)
    if found is None:
        raise TransactionNotFound()
    return found


async def by_provider_key(
    session: AsyncSession, *, company_id: int, provider: str, key: str
) -> Transaction | None:
    return await TransactionRepository(session, company_id).by_provider_key(provider, key)


async def by_provider_reference(
    session: AsyncSession, *, company_id: int, provider: str, reference: str
) -> Transaction | None:
    return await TransactionRepository(session, company_id).by_provider_reference(
        provider, reference
    )


async def settle(
    session: AsyncSession,
    transaction: Transaction,
    *,
    status: TransactionStatus,
    reason: str | None = None,
    provider_reference: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> bool:
    """Move a transaction to `status`; False (and nothing changed) when it is already final.
    The caller posts or voids the ledger reservation in the same transaction."""
    if TransactionStatus(transaction.status) in FINAL_STATUSES:
        return False
    transaction.status = status.value
    transaction.status_reason = reason[:200] if reason else None
    if provider_reference is not None:
        transaction.provider_reference = provider_reference
    if metadata:
        transaction.details = json.dumps(
            {**metadata_of(transaction), **metadata}, sort_keys=True, default=str
        )
    now = utcnow()
    transaction.updated_at = now
    if status is TransactionStatus.COMPLETED:
        transaction.completed_at = now
    await session.flush()
    return True


def metadata_of(transaction: Transaction) -> dict[str, Any]:
    try:
        parsed = json.loads(transaction.details or "{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}
