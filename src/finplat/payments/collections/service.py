"""Collections against an active mandate: the company takes an amount from the mandate's
budget into its master account.

Rules, checked with the mandate row locked (parallel collections on one mandate run one
after the other, so none can exceed what the rules allow):
* `merchantReferenceId` identifies the operation: the same reference with the same terms
  (mandate, amount, currency) answers the collection it made, as it is now (a pending one is
  refreshed from the provider first); with other terms it is 400
  `REFERENCE_REUSED_WITH_DIFFERENT_TERMS`.
* The mandate must be `ACTIVE` (409 `MANDATE_NOT_ACTIVE`, `MANDATE_CANCELLED`,
  `MANDATE_EXPIRED`), started (409 `MANDATE_NOT_STARTED`), in `Currency` (409
  `MANDATE_CURRENCY_MISMATCH`).
* A one-time mandate permits one outstanding or completed collection (409
  `MANDATE_ALREADY_USED`); a failed one frees it.
* The amount must fit `MaxAmount` (409 `MANDATE_MAX_AMOUNT_EXCEEDED`) and what is left of the
  current period's allowance (409 `MANDATE_ALLOWANCE_EXCEEDED`).
* Accepted: one pending ledger transfer reserves the money (budget -> company master) and the
  allowance together, and a `PENDING` `MANDATE_COLLECTION` transaction is recorded; a budget
  that cannot pay gives a `FAILED` collection with reason `INSUFFICIENT_FUNDS` (nothing
  reserved). Then, with no lock held, the provider is asked to collect: `COMPLETED` posts the
  reservation; `FAILED` voids it (money and allowance back) with the provider's typed reason;
  `PENDING`, or a lost answer (`PROVIDER_OUTCOME_UNCERTAIN`), keeps both until the provider's
  callback or reconciliation settles it. A pending collection is never reported completed.
* Events `collection.created`, `collection.completed`, `collection.failed`.
"""

from __future__ import annotations

import contextlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import structlog
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking import budgets
from finplat.errors import Conflict, NotFound
from finplat.events import service as events
from finplat.idempotency import service as idempotency
from finplat.kit.clock import today, utcnow
from finplat.kit.money import Money, from_minor
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.service import CompanyAccount
from finplat.payments.collections.models import PaymentCollection
from finplat.payments.collections.repository import CollectionRepository
from finplat.payments.mandates import allowance
from finplat.payments.mandates import service as mandates
from finplat.payments.mandates.models import MandateFrequencyV2, MandateStatusV2, PaymentMandate
from finplat.providers.banking.port import (
    BankingProvider,
    ProviderCollection,
    ProviderCollectionStatus,
)
from finplat.providers.calls import commit_then_call
from finplat.providers.errors import ProviderRejected, ProviderUnavailable
from finplat.providers.names import BankProvider
from finplat.providers.registry import Providers, configured
from finplat.transactions import refresh
from finplat.transactions import service as transactions
from finplat.transactions.kinds import FINAL_STATUSES, TransactionStatus, TransactionType
from finplat.transactions.models import Transaction

log = structlog.get_logger("finplat.payments.collections")

PROVIDER = BankProvider.BANKPROV.value
NO_BANKING = "No banking provider is configured."
COLLECTION_ID_PATTERN = r"^col_[0-9a-f]{24}$"
LEDGER_CODE = "payments.collection"
EVENT_DOMAIN = "collection"
OUTCOME_UNCERTAIN = "PROVIDER_OUTCOME_UNCERTAIN"
NEVER_RECEIVED = "PROVIDER_NEVER_RECEIVED"
INSUFFICIENT_FUNDS = "INSUFFICIENT_FUNDS"
NEVER_RECEIVED_AFTER = timedelta(minutes=10)


class CollectionNotFound(NotFound):
    code = "COLLECTION_NOT_FOUND"
    message = "No collection with that id."


class MandateNotActive(Conflict):
    code = "MANDATE_NOT_ACTIVE"
    message = "The mandate is not active: it has not been authorised, or was refused."


class MandateCancelled(Conflict):
    code = "MANDATE_CANCELLED"
    message = "The mandate was cancelled."


class MandateExpired(Conflict):
    code = "MANDATE_EXPIRED"
    message = "The mandate's EndDate has passed."


class MandateNotStarted(Conflict):
    code = "MANDATE_NOT_STARTED"
    message = "The mandate's StartDate has not come yet."


class MandateCurrencyMismatch(Conflict):
    code = "MANDATE_CURRENCY_MISMATCH"
    message = "The mandate is in another currency."


class MandateAlreadyUsed(Conflict):
    code = "MANDATE_ALREADY_USED"
    message = "A one-time mandate permits one outstanding or completed collection."


class MaxAmountExceeded(Conflict):
    code = "MANDATE_MAX_AMOUNT_EXCEEDED"
    message = "The amount is more than the mandate's MaxAmount."


class AllowanceExceeded(Conflict):
    code = "MANDATE_ALLOWANCE_EXCEEDED"
    message = "The amount is more than what the mandate still allows this period."


@dataclass(frozen=True)
class Collected:
    collection: PaymentCollection
    transaction: Transaction


def new_collection_id() -> str:
    return f"col_{secrets.token_hex(12)}"


def provider_key(company_id: int, merchant_reference_id: str) -> str:
    """The key the provider sees: the same for every retry with the reference."""
    return idempotency.derived_key(company_id, f"collection\x1f{merchant_reference_id}", "collect")


async def collect(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    mandate_id: str,
    money: Money,
    merchant_reference_id: str,
) -> Collected:
    """Create (or replay) the collection; see the module rules."""
    banking = configured(providers.banking, NO_BANKING)
    repo = CollectionRepository(session, company_id)
    try:
        mandate = await mandates.locked(session, company_id=company_id, mandate_id=mandate_id)
    except mandates.MandateNotFound:
        # A retry naming another mandate reuses its reference: that answer, not a 404.
        found = await repo.by_reference(merchant_reference_id)
        if found is None:
            raise
        return await _replay(session, providers, found, mandate_id=mandate_id, money=money)
    # Under the lock, so a parallel call with the reference on this mandate has finished.
    found = await repo.by_reference(merchant_reference_id)
    if found is not None:
        return await _replay(session, providers, found, mandate_id=mandate_id, money=money)
    _check(mandate, money)
    if MandateFrequencyV2(mandate.frequency) is MandateFrequencyV2.ONE_TIME and await repo.holding(
        mandate.id
    ):
        raise MandateAlreadyUsed()
    period = allowance.period_of(MandateFrequencyV2(mandate.frequency), today())
    await allowance.grant(session, mandate, period)
    key = provider_key(company_id, merchant_reference_id)
    try:
        async with session.begin_nested():
            collected, reservation = await _reserve(
                session,
                mandate=mandate,
                money=money,
                period=period,
                key=key,
                merchant_reference_id=merchant_reference_id,
            )
    except IntegrityError:
        # The reference was taken by a parallel collection on another mandate.
        raced = await repo.by_reference(merchant_reference_id)
        if raced is None:
            raise
        return await _replay(session, providers, raced, mandate_id=mandate_id, money=money)
    if reservation is None:
        return collected  # failed at once (the budget could not pay): nothing to ask
    return await _submit(
        session,
        providers,
        banking,
        collected,
        reservation,
        provider_mandate_id=mandate.provider_mandate_id,
    )


def _check(mandate: PaymentMandate, money: Money) -> None:
    status = MandateStatusV2(mandate.status)
    if status is MandateStatusV2.CANCELLED:
        raise MandateCancelled()
    if status is MandateStatusV2.EXPIRED:
        raise MandateExpired()
    if status is not MandateStatusV2.ACTIVE:
        raise MandateNotActive(f"The mandate is {status.value}.")
    if today() < mandate.start_date:
        raise MandateNotStarted()
    if money.currency != mandate.currency:
        raise MandateCurrencyMismatch(f"The mandate is in {mandate.currency}.")
    if money.minor > mandate.max_amount_minor:
        raise MaxAmountExceeded(
            f"The mandate's MaxAmount is "
            f"{from_minor(mandate.max_amount_minor, mandate.currency)} {mandate.currency}."
        )


async def _reserve(
    session: AsyncSession,
    *,
    mandate: PaymentMandate,
    money: Money,
    period: str,
    key: str,
    merchant_reference_id: str,
) -> tuple[Collected, ledger.Reservation | None]:
    """Record the collection and reserve money and allowance in one pending transfer (the
    reservation, to settle it with); a budget that cannot pay records it `FAILED`
    `INSUFFICIENT_FUNDS` instead (no reservation). An amount beyond what is left of the
    period's allowance is `AllowanceExceeded`, nothing recorded."""
    company_id = mandate.company_id
    accounts = await ledger.accounts_of(
        session,
        company_id=company_id,
        currency=money.currency,
        keys=[
            budgets.account_key(mandate.budget_id),
            ledger.company_key(company_id, CompanyAccount.MASTER),
            allowance.period_key(mandate, period),
            allowance.used_key(mandate),
        ],
    )
    source, master, allowed, used = accounts
    legs = [Leg(source.id, -money.minor), Leg(master.id, money.minor)]
    legs += allowance.legs(allowed, used, money.minor)
    reservation: ledger.Reservation | None = None
    try:
        # All or nothing: a refused debit leaves no leg applied (the ledger puts them back).
        reservation = await ledger.reserve(
            session,
            company_id=company_id,
            legs=legs,
            code=LEDGER_CODE,
            expires_at=None,  # the provider's outcome decides, however long it takes
            reference=key,
            details={"mandateId": mandate.id, "merchantReferenceId": merchant_reference_id},
            accounts=accounts,
        )
    except ledger.InsufficientFunds:
        # The allowance (checked first, as a refusal rather than a failed collection) or
        # the budget; the mandate's lock keeps the allowance from shrinking meanwhile.
        left = (await ledger.balance_of(session, allowed)).available
        if money.minor > left:
            raise AllowanceExceeded(
                f"The mandate allows {from_minor(left, money.currency)} {money.currency} "
                "more this period."
            ) from None
    pending_id = reservation.result.transfer_id if reservation else None
    tx = await transactions.record(
        session,
        company_id=company_id,
        user_id=mandate.user_id,
        type_=TransactionType.MANDATE_COLLECTION,
        status=TransactionStatus.PENDING if pending_id else TransactionStatus.FAILED,
        provider=PROVIDER,
        amount_minor=money.minor,
        currency=money.currency,
        budget_id=mandate.budget_id,
        provider_key=key,
        ledger_pending_id=pending_id,
        metadata={"mandateId": mandate.id, "merchantReferenceId": merchant_reference_id},
    )
    if pending_id is None:
        tx.status_reason = INSUFFICIENT_FUNDS
        await session.flush()
    collection = await CollectionRepository(session, company_id).create(
        {
            "id": new_collection_id(),
            "mandate_id": mandate.id,
            "user_id": mandate.user_id,
            "amount_minor": money.minor,
            "currency": money.currency,
            "merchant_reference_id": merchant_reference_id,
            "period": period,
            "transaction_id": tx.id,
        }
    )
    await _event(session, collection, tx, "collection.created")
    if pending_id is None:
        await _event(session, collection, tx, "collection.failed")
    return Collected(collection, tx), reservation


async def _submit(
    session: AsyncSession,
    providers: Providers,
    banking: BankingProvider,
    collected: Collected,
    reservation: ledger.Reservation,
    *,
    provider_mandate_id: str,
) -> Collected:
    """Ask the provider to collect (no lock held), then apply its answer: the collection as
    it is after."""
    collection = collected.collection
    company_id, tx_id = collection.company_id, collected.transaction.id
    key = collected.transaction.provider_key
    assert key is not None
    currency, amount_minor = collection.currency, collection.amount_minor
    try:
        answer: ProviderCollection = await commit_then_call(
            session,
            providers.policy,
            provider=PROVIDER,
            operation="collect",
            call=lambda: banking.collect(
                company_id=company_id,
                idempotency_key=key,
                mandate_id=provider_mandate_id,
                currency=currency,
                amount_minor=amount_minor,
            ),
            idempotent=True,
        )
    except ProviderUnavailable:
        # Timeout or outage: the provider may have collected. Keep money and allowance
        # reserved; the provider's callback or reconciliation decides.
        await _mark_uncertain(session, company_id, tx_id)
    except ProviderRejected as refusal:
        await settle(
            session,
            company_id=company_id,
            tx_id=tx_id,
            status=ProviderCollectionStatus.FAILED,
            reason=refusal.code,
            provider_collection_id=None,
            collection=collection,
        )
    else:
        await settle(
            session,
            company_id=company_id,
            tx_id=tx_id,
            status=answer.status,
            reason=answer.reason.value if answer.reason else None,
            provider_collection_id=answer.collection_id,
            collection=collection,
            reservation=reservation,
        )
    # The transaction's lock read refreshed the request's own object: it is current.
    return collected


async def _replay(
    session: AsyncSession,
    providers: Providers,
    found: PaymentCollection,
    *,
    mandate_id: str,
    money: Money,
) -> Collected:
    if (found.mandate_id, found.amount_minor, found.currency) != (
        mandate_id,
        money.minor,
        money.currency,
    ):
        raise idempotency.ReferenceReused(
            "This merchantReferenceId was already used for a collection with other terms."
        )
    return await refreshed(session, providers, company_id=found.company_id, collection_id=found.id)


async def get(session: AsyncSession, *, company_id: int, collection_id: str) -> Collected:
    collection = await CollectionRepository(session, company_id).find(collection_id)
    if collection is None:
        raise CollectionNotFound()
    tx = await CollectionRepository(session, company_id).transaction(
        collection.transaction_id, fresh=True
    )
    assert tx is not None
    return Collected(collection, tx)


async def refreshed(
    session: AsyncSession, providers: Providers, *, company_id: int, collection_id: str
) -> Collected:
    """The collection, asking the provider first while it is pending (its last known state
    when the provider cannot answer)."""
    collected = await get(session, company_id=company_id, collection_id=collection_id)
    if collected.transaction.status != TransactionStatus.PENDING.value:
        return collected
    with contextlib.suppress(ProviderUnavailable, ProviderRejected):
        # The provider cannot tell now: answer what is known.
        await refresh.refresh(session, providers, collected.transaction)
    return await get(session, company_id=company_id, collection_id=collection_id)


# ------------------------------------------------------------------------------ settlement


async def apply(
    session: AsyncSession, *, company_id: int, tx_id: int, answer: ProviderCollection
) -> bool:
    return await settle(
        session,
        company_id=company_id,
        tx_id=tx_id,
        status=answer.status,
        reason=answer.reason.value if answer.reason else None,
        provider_collection_id=answer.collection_id,
    )


async def settle(
    session: AsyncSession,
    *,
    company_id: int,
    tx_id: int,
    status: ProviderCollectionStatus,
    reason: str | None,
    provider_collection_id: str | None,
    collection: PaymentCollection | None = None,
    reservation: ledger.Reservation | None = None,
) -> bool:
    """Apply the provider's state; True when the collection became final now. The one place
    that posts or voids a collection's reservation (a final one is never changed again).
    `collection` and `reservation`: the collection and its pending transfer as this request
    made them, to save reading them again. The transaction is locked and read afresh into
    the session's object."""
    tx = await _locked(session, company_id, tx_id)
    if TransactionStatus(tx.status) in FINAL_STATUSES:
        return False
    now = utcnow()
    if provider_collection_id is not None and tx.provider_reference is None:
        tx.provider_reference = provider_collection_id
        tx.updated_at = now
        if tx.status_reason == OUTCOME_UNCERTAIN:
            tx.status_reason = None  # the provider has it: pending, no longer uncertain
    if collection is None:
        collection = await CollectionRepository(session, company_id).by_transaction(tx.id)
    assert collection is not None
    if status is ProviderCollectionStatus.COMPLETED:
        assert tx.ledger_pending_id is not None
        await ledger.post_pending(
            session,
            company_id=company_id,
            pending_id=tx.ledger_pending_id,
            details={"providerCollectionId": tx.provider_reference},
            reservation=reservation,
        )
        await transactions.settle(session, tx, status=TransactionStatus.COMPLETED)
        await _event(session, collection, tx, "collection.completed")
        return True
    if status is ProviderCollectionStatus.FAILED:
        await _void_and_fail(session, collection, tx, reason or "PROVIDER_FAILED")
        return True
    await session.flush()
    return False


async def _mark_uncertain(session: AsyncSession, company_id: int, tx_id: int) -> None:
    tx = await _locked(session, company_id, tx_id)
    if TransactionStatus(tx.status) not in FINAL_STATUSES and tx.provider_reference is None:
        tx.status_reason = OUTCOME_UNCERTAIN
        tx.updated_at = utcnow()
        await session.flush()


async def never_received(session: AsyncSession, *, company_id: int, tx: Transaction) -> None:
    """The provider has no collection under the key: once old enough that no creation can
    still be in flight, fail it and release money and allowance."""
    if utcnow() - tx.created_at < NEVER_RECEIVED_AFTER:
        return
    locked = await _locked(session, company_id, tx.id)
    if TransactionStatus(locked.status) in FINAL_STATUSES:
        return
    collection = await CollectionRepository(session, company_id).by_transaction(locked.id)
    assert collection is not None
    await _void_and_fail(session, collection, locked, NEVER_RECEIVED)


async def _void_and_fail(
    session: AsyncSession, collection: PaymentCollection, tx: Transaction, reason: str
) -> None:
    assert tx.ledger_pending_id is not None
    await ledger.void_pending(
        session,
        company_id=collection.company_id,
        pending_id=tx.ledger_pending_id,
        details={"reason": reason},
    )
    await transactions.settle(session, tx, status=TransactionStatus.FAILED, reason=reason)
    await _event(session, collection, tx, "collection.failed")


async def _locked(session: AsyncSession, company_id: int, tx_id: int) -> Transaction:
    tx = await CollectionRepository(session, company_id).transaction(tx_id, lock=True)
    if tx is None:
        raise LookupError(f"collection transaction {tx_id} does not exist")
    return tx


async def _event(
    session: AsyncSession, collection: PaymentCollection, tx: Transaction, type_: str
) -> None:
    data: dict[str, Any] = {
        "collectionId": collection.id,
        "mandateId": collection.mandate_id,
        "merchantReferenceId": collection.merchant_reference_id,
        "transactionId": tx.id,
        "userId": collection.user_id,
        "status": tx.status,
        "failureReason": tx.status_reason if tx.status == TransactionStatus.FAILED.value else None,
        "amount": from_minor(collection.amount_minor, collection.currency),
        "currency": collection.currency,
    }
    await events.record(
        session,
        company_id=collection.company_id,
        type_=type_,
        domain=EVENT_DOMAIN,
        provider=PROVIDER,
        data=data,
    )
