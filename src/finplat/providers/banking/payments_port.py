"""The banking provider's payments port: payouts to payees, grouped by the provider into
payment batches (a batch whose payments need a currency conversion carries an FX order).

Statuses are the provider's; asynchronous changes arrive as callbacks:
* `payment.status_changed` `{paymentId, batchId, status, reason, idempotencyKey}` (the key the
  payment was created under, so a payment whose creation answer was lost is still found);
* `payment_batch.status_changed` `{batchId, status, paymentIds}` (batch statuses: PENDING,
  PROCESSING, COMPLETED, CANCELLED);
* `payment_batch_order.cancelled` `{batchId, orderId, paymentIds, reason}` (the batch's FX
  order was cancelled; its payments failed).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Protocol

PAYMENT_STATUS_CHANGED = "payment.status_changed"
BATCH_STATUS_CHANGED = "payment_batch.status_changed"
BATCH_ORDER_CANCELLED = "payment_batch_order.cancelled"


class PaymentStatus(StrEnum):
    PENDING = "PENDING"  # accepted, waiting in its batch
    PROCESSING = "PROCESSING"  # the batch is being executed
    COMPLETED = "COMPLETED"  # the money left; the provider debited the budget for good
    FAILED = "FAILED"  # refused, returned or cancelled; the provider refunded the budget


@dataclass(frozen=True)
class PaymentPrice:
    """What a payout costs: the payee receives `amount_minor` of `currency`; the budget
    gives `debit_amount_minor` + `fee_minor` of `debit_currency`."""

    amount_minor: int
    currency: str
    debit_amount_minor: int
    debit_currency: str
    fee_minor: int
    rate: Decimal  # units of `currency` per unit of `debit_currency` (1 when the same)


@dataclass(frozen=True)
class ProviderPayment:
    payment_id: str  # a positive integer, as a string
    batch_id: str
    status: PaymentStatus
    amount_minor: int
    currency: str
    debit_amount_minor: int
    debit_currency: str
    fee_minor: int
    reason: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class PaymentConfirmation:
    """The provider's proof that a payment was executed."""

    payment_id: str
    status: PaymentStatus
    amount_minor: int
    currency: str
    beneficiary_name: str
    beneficiary_account_last4: str
    payment_method: str
    confirmation_reference: str  # the scheme's end-to-end reference
    executed_at: datetime


class PaymentsPort(Protocol):
    async def price_payment(
        self,
        *,
        company_id: int,
        budget_id: str,
        payment_method: str,
        amount_minor: int,
        currency: str,
        debit_currency: str,
    ) -> PaymentPrice:
        """Price a payout (fee for the method, conversion when the currencies differ)."""
        ...

    async def create_payment(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        budget_id: str,
        payee_id: str,
        amount_minor: int,
        currency: str,
        debit_currency: str,
        reference: str | None,
    ) -> ProviderPayment:
        """Accept a payout (a repeat with the same key returns the first payment). The
        provider debits the budget at once and refunds it if the payment fails."""
        ...

    async def payment(self, *, company_id: int, payment_id: str) -> ProviderPayment:
        """The payment's current state (404 if the provider has none)."""
        ...

    async def payment_by_key(
        self, *, company_id: int, idempotency_key: str
    ) -> ProviderPayment | None:
        """The payment created with this key, if the provider received it (finds a payment
        whose creation answer was lost)."""
        ...

    async def payment_confirmation(
        self, *, company_id: int, payment_id: str
    ) -> PaymentConfirmation:
        """Proof of execution; refused (400) unless the payment completed, 404 if unknown."""
        ...
