"""Applying the provider's state of a payment to its payout: the one place that posts or
releases a payout's reservation. Used by the create call, the provider's callbacks, the
refresher (reconciliation) and the sandbox.

* provider `COMPLETED` -> post the reservation (the money left), payout `COMPLETED`,
  event `payout.completed`;
* provider `FAILED` -> void the reservation (the provider refunded its balance), payout
  `FAILED` with the provider's reason, event `payout.failed`;
* `PENDING` / `PROCESSING` -> unchanged, except that the provider's payment and batch ids are
  recorded once known.

The payout row is locked first (and re-read), so two deliveries of the same outcome (a
callback racing the refresher) settle it once; a final payout is never changed again.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking.payouts.repository import PayoutTransactionRepository
from finplat.events import service as events
from finplat.kit.clock import utcnow
from finplat.kit.money import from_minor
from finplat.ledger import service as ledger
from finplat.providers.banking.port import PaymentStatus, ProviderPayment
from finplat.providers.names import BankProvider
from finplat.transactions import service as transactions
from finplat.transactions.kinds import FINAL_STATUSES, TransactionStatus
from finplat.transactions.models import Transaction

PROVIDER = BankProvider.BANKPROV.value
OUTCOME_UNCERTAIN = "PROVIDER_OUTCOME_UNCERTAIN"
NEVER_RECEIVED = "PROVIDER_NEVER_RECEIVED"
EVENT_DOMAIN = "payout"


async def _locked(session: AsyncSession, company_id: int, tx_id: int) -> Transaction:
    tx = await PayoutTransactionRepository(session, company_id).find(tx_id, lock=True)
    if tx is None:
        raise LookupError(f"payout {tx_id} does not exist")
    return tx


def _is_final(tx: Transaction) -> bool:
    return TransactionStatus(tx.status) in FINAL_STATUSES


def _note(tx: Transaction, *, payment_id: str | None, batch_id: str | None) -> None:
    """Record the provider's payment and batch ids on the payout (first time only)."""
    now = utcnow()
    if payment_id is not None and tx.provider_reference is None:
        tx.provider_reference = payment_id
        tx.updated_at = now
    if batch_id is not None and transactions.metadata_of(tx).get("paymentBatchId") != batch_id:
        transactions.add_metadata(tx, {"paymentBatchId": batch_id})
        tx.updated_at = now
    if tx.status_reason == OUTCOME_UNCERTAIN and payment_id is not None:
        # The provider has the payment: its outcome is no longer uncertain, only pending.
        tx.status_reason = None
        tx.updated_at = now


async def apply(
    session: AsyncSession, *, company_id: int, tx_id: int, payment: ProviderPayment
) -> bool:
    """Apply the provider's payment state; True when the payout became final now."""
    return await settle(
        session,
        company_id=company_id,
        tx_id=tx_id,
        status=payment.status,
        reason=payment.reason,
        payment_id=payment.payment_id,
        batch_id=payment.batch_id,
    )


async def settle(
    session: AsyncSession,
    *,
    company_id: int,
    tx_id: int,
    status: PaymentStatus,
    reason: str | None,
    payment_id: str | None = None,
    batch_id: str | None = None,
) -> bool:
    tx = await _locked(session, company_id, tx_id)
    if _is_final(tx):
        return False
    _note(tx, payment_id=payment_id, batch_id=batch_id)
    if status is PaymentStatus.COMPLETED:
        assert tx.ledger_pending_id is not None
        await ledger.post_pending(
            session,
            company_id=company_id,
            pending_id=tx.ledger_pending_id,
            details={"providerPaymentId": tx.provider_reference},
        )
        await transactions.settle(session, tx, status=TransactionStatus.COMPLETED)
        await _event(session, company_id, tx, "payout.completed")
        return True
    if status is PaymentStatus.FAILED:
        await _void_and_fail(session, company_id, tx, reason or "PROVIDER_FAILED")
        return True
    await PayoutTransactionRepository(session, company_id).save(tx)
    return False


async def fail(session: AsyncSession, *, company_id: int, tx_id: int, reason: str) -> bool:
    """The provider refused or never received the payment: release the money, payout
    `FAILED`."""
    tx = await _locked(session, company_id, tx_id)
    if _is_final(tx):
        return False
    await _void_and_fail(session, company_id, tx, reason)
    return True


async def mark_uncertain(session: AsyncSession, *, company_id: int, tx_id: int) -> Transaction:
    """The provider's answer to the creation was lost: the payout stays `PENDING` with its
    reservation, flagged for reconciliation."""
    tx = await _locked(session, company_id, tx_id)
    if not _is_final(tx) and tx.provider_reference is None:
        tx.status_reason = OUTCOME_UNCERTAIN
        tx.updated_at = utcnow()
        await session.flush()
    return tx


async def _void_and_fail(
    session: AsyncSession, company_id: int, tx: Transaction, reason: str
) -> None:
    assert tx.ledger_pending_id is not None
    await ledger.void_pending(
        session,
        company_id=company_id,
        pending_id=tx.ledger_pending_id,
        details={"reason": reason},
    )
    await transactions.settle(session, tx, status=TransactionStatus.FAILED, reason=reason)
    await _event(session, company_id, tx, "payout.failed")


async def _event(session: AsyncSession, company_id: int, tx: Transaction, type_: str) -> None:
    meta = transactions.metadata_of(tx)
    data: dict[str, Any] = {
        "payoutId": tx.id,
        "transactionId": tx.id,
        "userId": tx.user_id,
        "status": tx.status,
        "reason": tx.status_reason,
        "amount": from_minor(tx.amount_minor, tx.currency),
        "currency": tx.currency,
        "debitAmount": Decimal(str(meta["debitAmount"])) if "debitAmount" in meta else None,
        "debitCurrency": meta.get("debitCurrency"),
        "payeeId": meta.get("payeeId"),
        "budgetId": tx.budget_id,
        "paymentBatchId": meta.get("paymentBatchId"),
    }
    await events.record(
        session,
        company_id=company_id,
        type_=type_,
        domain=EVENT_DOMAIN,
        provider=PROVIDER,
        data=data,
    )
