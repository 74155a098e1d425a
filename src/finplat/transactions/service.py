"""Transactions: the business record of each money movement of a user.

Rules (spec, "Transaction (single)" and Errors): a transaction reports `UserId`,
`RelatedCardTransactionId`, `FeeAmount`, `FeeCurrency` and parsed `Metadata`; a pending or
uncertain provider outcome stays `PENDING` (never reported completed) until the provider's
answer settles it. Reading one transaction refreshes its status from the provider first; a
provider that cannot answer does not fail the read (the stored state is answered).

Payment confirmation (spec, Errors): a non-positive or non-numeric payment id, or a provider
rejection, is 400; a payment that is not found is 404.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.errors import ApiError, NotFound, ServiceUnavailable
from finplat.kit.clock import utcnow
from finplat.kit.pagination import PageRequest, PageSlice, fetch_page
from finplat.kit.schemas import MAX_ID
from finplat.providers.banking.port import PaymentConfirmation
from finplat.providers.calls import commit_then_call
from finplat.providers.errors import ProviderRejected, ProviderUnavailable
from finplat.providers.names import BankProvider
from finplat.providers.registry import Providers, configured
from finplat.transactions import refresh
from finplat.transactions.kinds import FINAL_STATUSES, TransactionStatus, TransactionType
from finplat.transactions.models import Transaction
from finplat.transactions.repository import TransactionRepository
from finplat.users import service as users

log = structlog.get_logger("finplat.transactions")
NO_BANKING = "No banking provider is configured."


class TransactionNotFound(NotFound):
    code = "TRANSACTION_NOT_FOUND"
    message = "No transaction with that id."


class InvalidPaymentId(ApiError):
    status = 400
    code = "INVALID_PAYMENT_ID"
    message = f"The payment id must be a positive integer of at most {MAX_ID}."


class PaymentNotFound(NotFound):
    code = "PAYMENT_NOT_FOUND"
    message = "No banking-provider payout with that id."


class PaymentConfirmationRejected(ApiError):
    status = 400
    code = "PAYMENT_CONFIRMATION_REJECTED"
    message = "The banking provider refused to confirm the payment."


def positive_integer_pattern(maximum: int) -> str:
    """A regular expression matching exactly the decimal integers 1..`maximum` (no sign, no
    leading zero), so the document states the whole rule, the upper bound included."""
    digits = str(maximum)
    last = len(digits) - 1
    branches = []
    if last > 0:
        branches.append("[1-9]" if last == 1 else f"[1-9][0-9]{{0,{last - 1}}}")
    for position, digit in enumerate(digits):
        lowest = 1 if position == 0 else 0
        # Below this digit any tail goes; at the last position the digit itself is included.
        highest = int(digit) if position == last else int(digit) - 1
        if highest < lowest:
            continue
        choice = str(lowest) if highest == lowest else f"[{lowest}-{highest}]"
        rest = last - position
        tail = "" if rest == 0 else ("[0-9]" if rest == 1 else f"[0-9]{{{rest}}}")
        branches.append(f"{digits[:position]}{choice}{tail}")
    return "^(?:" + "|".join(branches) + ")$"


PAYMENT_ID_PATTERN = positive_integer_pattern(MAX_ID)
_PAYMENT_ID = re.compile(PAYMENT_ID_PATTERN)


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
    return await TransactionRepository(session, company_id).create(
        {
            "user_id": user_id,
            "type": type_.value,
            "status": status.value,
            "provider": provider,
            "amount_minor": amount_minor,
            "currency": currency,
            "fee_minor": fee_minor,
            "fee_currency": fee_currency,
            "budget_id": budget_id,
            "provider_reference": provider_reference,
            "provider_key": provider_key,
            "ledger_pending_id": ledger_pending_id,
            "related_card_transaction_id": related_card_transaction_id,
            "details": json.dumps(dict(metadata or {}), sort_keys=True, default=str),
            "completed_at": now if status is TransactionStatus.COMPLETED else None,
            "created_at": now,
            "updated_at": now,
        }
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
        add_metadata(transaction, metadata)
    now = utcnow()
    transaction.updated_at = now
    if status is TransactionStatus.COMPLETED:
        transaction.completed_at = now
    await TransactionRepository(session, transaction.company_id).save(transaction)
    return True


async def save_metadata(
    session: AsyncSession, transaction: Transaction, metadata: Mapping[str, Any]
) -> None:
    """`add_metadata`, written at once (one UPDATE, no flush)."""
    add_metadata(transaction, metadata)
    await TransactionRepository(session, transaction.company_id).save(transaction)


def add_metadata(transaction: Transaction, metadata: Mapping[str, Any]) -> None:
    """Merge `metadata` into the transaction's (a key given again takes the new value)."""
    transaction.details = json.dumps(
        {**metadata_of(transaction), **metadata}, sort_keys=True, default=str
    )


def metadata_of(transaction: Transaction) -> dict[str, Any]:
    try:
        parsed = json.loads(transaction.details or "{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


# ------------------------------------------------------------------------------------- reads


async def find(
    session: AsyncSession, *, company_id: int, transaction_id: int, user_id: int | None = None
) -> Transaction:
    """The company's transaction (and `user_id`'s, when given); anything else is 404, an
    unknown user `USER_NOT_FOUND` first."""
    found = await TransactionRepository(session, company_id).get(transaction_id)
    if found is None or (user_id is not None and found.user_id != user_id):
        if user_id is not None:
            await users.get_user(session, company_id=company_id, user_id=user_id)
        raise TransactionNotFound()
    return found


async def refreshed(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    transaction_id: int,
    user_id: int | None = None,
) -> Transaction:
    """The transaction after asking its provider about it (when it is still pending).

    A provider that cannot answer (unavailable, timed out, refused, not configured) does not
    fail the read: it is logged and the stored state is returned. The refresher commits
    before calling the provider, so only its own unfinished changes are rolled back.
    """
    transaction = await find(
        session, company_id=company_id, transaction_id=transaction_id, user_id=user_id
    )
    try:
        await refresh.refresh(session, providers, transaction)
    except (ProviderUnavailable, ProviderRejected, ServiceUnavailable) as exc:
        log.warning(
            "transaction_refresh_failed",
            transaction_id=transaction_id,
            type=transaction.type,
            provider=transaction.provider,
            error_code=exc.code,
        )
        await session.rollback()
        await session.refresh(transaction)
    return transaction


async def list_transactions(
    session: AsyncSession,
    *,
    company_id: int,
    page: PageRequest,
    user_id: int | None = None,
    types: Sequence[TransactionType] = (),
    statuses: Sequence[TransactionStatus] = (),
) -> PageSlice[Transaction]:
    """The company's transactions (one user's when `user_id` is given), newest first."""
    if user_id is not None:
        await users.get_user(session, company_id=company_id, user_id=user_id)
    stmt = TransactionRepository(session, company_id).listing(
        user_id=user_id,
        types=sorted({t.value for t in types}),
        statuses=sorted({s.value for s in statuses}),
    )
    return await fetch_page(session, stmt, page)


# ----------------------------------------------------------------------- payment confirmation


@dataclass(frozen=True)
class ConfirmedPayment:
    transaction: Transaction
    confirmation: PaymentConfirmation


def payment_id_of(raw: str) -> int:
    """The transaction id of a payout, from the path: a positive integer up to `MAX_ID`."""
    if not _PAYMENT_ID.fullmatch(raw):
        raise InvalidPaymentId()
    return int(raw)


async def payment_confirmation(
    session: AsyncSession, providers: Providers, *, company_id: int, payment_id: str
) -> ConfirmedPayment:
    """The banking provider's proof that a payout of the company was executed.

    Only a payout made through the banking provider that reached it (has its payment id) can
    be confirmed; anything else is 404. The provider refuses to confirm a payment that has
    not completed: 400 `PAYMENT_CONFIRMATION_REJECTED` (the spec's "provider rejection");
    the provider not knowing the payment is 404.
    """
    transaction_id = payment_id_of(payment_id)
    transaction = await TransactionRepository(session, company_id).get(transaction_id)
    if (
        transaction is None
        or transaction.type != TransactionType.PAYOUT.value
        or transaction.provider != BankProvider.BANKPROV.value
        or not transaction.provider_reference
    ):
        raise PaymentNotFound()
    banking = configured(providers.banking, NO_BANKING)
    reference = transaction.provider_reference
    try:
        confirmation = await commit_then_call(
            session,
            providers.policy,
            provider=BankProvider.BANKPROV.value,
            operation="payment_confirmation",
            call=lambda: banking.payment_confirmation(company_id=company_id, payment_id=reference),
            idempotent=True,
        )
    except ProviderRejected as exc:
        if exc.status == 404:
            raise PaymentNotFound() from None
        raise PaymentConfirmationRejected(
            exc.message,
            validation_errors=exc.validation_errors,
            details=f"Provider code: {exc.code}",
        ) from None
    return ConfirmedPayment(transaction, confirmation)
