"""Sandbox banking provider: payments to payees, grouped in payment batches.

Behaves as the real provider does:
* `price_payment` quotes the fee of the payee's method (SEPA.CREDITTRANSFER 0, SEPA.INSTANT
  0.50, FPS 0, SWIFT 15.00, in the debit currency) and, when the payee's currency differs from
  the debit currency, converts at the mid rate less a 0.5% spread (the debit rounded up to
  the next minor unit);
* `create_payment` deduplicates by idempotency key, debits `debit + fee` from the budget at
  once and puts the payment, `PENDING`, in a new batch (with an FX order when it converts);
* the batch later goes `PROCESSING`, then `COMPLETED` (its payments complete) or `CANCELLED`
  (its payments fail); a batch's FX order can be cancelled (its payments fail). A failed
  payment's money goes back to the budget.
* every change is sent to the platform as a callback: `payment.status_changed`
  `{paymentId, batchId, status, reason, idempotencyKey}`, `payment_batch.status_changed`
  `{batchId, status, paymentIds}`, `payment_batch_order.cancelled`
  `{batchId, orderId, paymentIds, reason}`.

Those changes are driven by the sandbox endpoints through `SandboxPaymentSimulation`.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_DOWN, Decimal
from typing import Protocol, cast, runtime_checkable

from sqlalchemy import Table, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.db.dialect import for_update, insert_ignoring_conflicts
from finplat.db.unit_of_work import unit_of_work
from finplat.kit.clock import utcnow
from finplat.kit.money import exponent, from_minor, to_minor
from finplat.providers.banking.port import (
    BATCH_ORDER_CANCELLED,
    BATCH_STATUS_CHANGED,
    PAYMENT_STATUS_CHANGED,
    PaymentConfirmation,
    PaymentPrice,
    PaymentStatus,
    ProviderPayeeStatus,
    ProviderPayment,
)
from finplat.providers.banking.sandbox.budgets import SandboxBankingCore
from finplat.providers.banking.sandbox.models import (
    PAYMENT_ID_OFFSET,
    SandboxBankprovPayment,
    SandboxBankprovPaymentBatch,
)
from finplat.providers.banking.sandbox.payees import PayeeUnknown, sandbox_payee
from finplat.providers.errors import ProviderRejected
from finplat.providers.sandbox.faults import FaultMode

_PAYMENTS = cast(Table, SandboxBankprovPayment.__table__)
_BATCHES = cast(Table, SandboxBankprovPaymentBatch.__table__)

OPERATIONS: tuple[str, ...] = (
    "price_payment",
    "create_payment",
    "payment_status",
    "payment_confirmation",
    "advance_payment",
)

# Fee per payment method, in the debit currency's major units.
FEES: dict[str, Decimal] = {
    "SEPA.CREDITTRANSFER": Decimal("0"),
    "SEPA.INSTANT": Decimal("0.50"),
    "FPS": Decimal("0"),
    "SWIFT": Decimal("15.00"),
}
# Mid-market rates, in USD per unit, and the provider's spread on conversions.
MID_RATES_USD: dict[str, Decimal] = {
    "EUR": Decimal("1.08"),
    "GBP": Decimal("1.27"),
    "USD": Decimal("1"),
}
SPREAD = Decimal("0.005")
RATE_PLACES = Decimal("0.000001")


class BatchStatus:
    PENDING = "PENDING"
    PROCESSING = "PROCESSING"
    COMPLETED = "COMPLETED"
    CANCELLED = "CANCELLED"


class OrderStatus:
    OPEN = "OPEN"
    FILLED = "FILLED"
    CANCELLED = "CANCELLED"


FINAL_BATCH = frozenset({BatchStatus.COMPLETED, BatchStatus.CANCELLED})
FINAL_PAYMENT = frozenset({PaymentStatus.COMPLETED.value, PaymentStatus.FAILED.value})


class PaymentUnknown(ProviderRejected):
    status = 404
    code = "PROVIDER_PAYMENT_NOT_FOUND"
    message = "The banking provider has no such payment."


class BatchUnknown(ProviderRejected):
    status = 404
    code = "PROVIDER_BATCH_NOT_FOUND"
    message = "The banking provider has no such payment batch."


class MethodNotSupported(ProviderRejected):
    status = 400
    code = "PROVIDER_PAYMENT_METHOD_NOT_SUPPORTED"
    message = "The banking provider does not support that payment method."


class CurrencyNotSupported(ProviderRejected):
    status = 400
    code = "PROVIDER_CURRENCY_NOT_SUPPORTED"
    message = "The banking provider does not pay out or convert that currency."


class PaymentNotCompleted(ProviderRejected):
    status = 400
    code = "PAYMENT_NOT_COMPLETED"
    message = "The payment has not been executed; there is no confirmation yet."


class InvalidTransition(ProviderRejected):
    status = 409
    code = "PROVIDER_INVALID_TRANSITION"
    message = "The payment or batch cannot change to that status from its current one."


class NoFxOrder(ProviderRejected):
    status = 409
    code = "PROVIDER_BATCH_HAS_NO_FX_ORDER"
    message = "The payment batch has no open FX order to cancel."


@dataclass(frozen=True)
class _Beneficiary:
    payment_method: str
    name: str
    account_last4: str
    currency: str


@dataclass(frozen=True)
class SimulatedBatch:
    batch_id: str
    status: str
    order_id: str | None
    order_status: str | None
    payments: list[ProviderPayment]


@runtime_checkable
class SandboxPaymentSimulation(Protocol):
    """What only the sandbox provider offers: driving payments and batches through their
    states (each change is sent as a callback)."""

    async def advance_payment(
        self, *, company_id: int, payment_id: str, status: PaymentStatus
    ) -> ProviderPayment: ...

    async def advance_batch(
        self, *, company_id: int, batch_id: str, status: str
    ) -> SimulatedBatch: ...

    async def cancel_batch_order(self, *, company_id: int, batch_id: str) -> SimulatedBatch: ...


def quote(
    *, payment_method: str, amount_minor: int, currency: str, debit_currency: str
) -> PaymentPrice:
    """The sandbox's price list (pure)."""
    if payment_method not in FEES:
        raise MethodNotSupported()
    for code in (currency, debit_currency):
        if code not in MID_RATES_USD:
            raise CurrencyNotSupported(f"The banking provider does not handle {code} payouts.")
    fee_minor = to_minor(FEES[payment_method], debit_currency)
    if currency == debit_currency:
        return PaymentPrice(
            amount_minor=amount_minor,
            currency=currency,
            debit_amount_minor=amount_minor,
            debit_currency=debit_currency,
            fee_minor=fee_minor,
            rate=Decimal(1),
        )
    mid = MID_RATES_USD[debit_currency] / MID_RATES_USD[currency]
    # Units of `currency` per unit of `debit_currency`, the spread in the provider's favour.
    rate = (mid * (1 - SPREAD)).quantize(RATE_PLACES, rounding=ROUND_DOWN)
    debit = from_minor(amount_minor, currency) / rate
    debit_minor = int(
        debit.scaleb(exponent(debit_currency)).to_integral_value(rounding=ROUND_CEILING)
    )
    return PaymentPrice(
        amount_minor=amount_minor,
        currency=currency,
        debit_amount_minor=debit_minor,
        debit_currency=debit_currency,
        fee_minor=fee_minor,
        rate=rate,
    )


def _payment(row: SandboxBankprovPayment) -> ProviderPayment:
    return ProviderPayment(
        payment_id=row.payment_id,
        batch_id=row.batch_id,
        status=PaymentStatus(row.status),
        amount_minor=row.amount_minor,
        currency=row.currency,
        debit_amount_minor=row.debit_amount_minor,
        debit_currency=row.debit_currency,
        fee_minor=row.fee_minor,
        reason=row.reason,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _batch(
    batch: SandboxBankprovPaymentBatch, payments: Sequence[SandboxBankprovPayment]
) -> SimulatedBatch:
    return SimulatedBatch(
        batch_id=batch.batch_id,
        status=batch.status,
        order_id=batch.order_id,
        order_status=batch.order_status,
        payments=[_payment(row) for row in payments],
    )


def _row_id(payment_id: str) -> int | None:
    if not payment_id.isascii() or not payment_id.isdigit():
        return None
    row_id = int(payment_id) - PAYMENT_ID_OFFSET
    return row_id if 0 < row_id < 2**53 else None


class SandboxPayments(SandboxBankingCore):
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
        await self.sim.enter(company_id, "price_payment")
        async with unit_of_work(self.factory) as session:
            await self.budget_row(session, company_id, budget_id)
        return quote(
            payment_method=payment_method,
            amount_minor=amount_minor,
            currency=currency,
            debit_currency=debit_currency,
        )

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
        mode = await self.sim.enter(company_id, "create_payment")
        async with unit_of_work(self.factory) as session:
            existing = await self._pay_by_key(session, idempotency_key)
            if existing is None:
                existing = await self._pay_create(
                    session,
                    company_id=company_id,
                    idempotency_key=idempotency_key,
                    budget_id=budget_id,
                    payee_id=payee_id,
                    amount_minor=amount_minor,
                    currency=currency,
                    debit_currency=debit_currency,
                    reference=reference,
                )
            payment = _payment(existing)
            same = (
                existing.company_id,
                existing.budget_id,
                existing.payee_id,
                existing.amount_minor,
                existing.currency,
                existing.debit_currency,
            ) == (company_id, budget_id, payee_id, amount_minor, currency, debit_currency)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        if not same:
            raise ProviderRejected(
                "The provider already accepted a different payment under this key.",
                status=409,
                code="PROVIDER_IDEMPOTENCY_MISMATCH",
            )
        return payment

    async def payment(self, *, company_id: int, payment_id: str) -> ProviderPayment:
        await self.sim.enter(company_id, "payment_status")
        async with unit_of_work(self.factory) as session:
            return _payment(await self._pay_row(session, company_id, payment_id))

    async def payment_by_key(
        self, *, company_id: int, idempotency_key: str
    ) -> ProviderPayment | None:
        await self.sim.enter(company_id, "payment_status")
        async with unit_of_work(self.factory) as session:
            row = await self._pay_by_key(session, idempotency_key)
            if row is None or row.company_id != company_id:
                return None
            return _payment(row)

    async def payment_confirmation(
        self, *, company_id: int, payment_id: str
    ) -> PaymentConfirmation:
        await self.sim.enter(company_id, "payment_confirmation")
        async with unit_of_work(self.factory) as session:
            row = await self._pay_row(session, company_id, payment_id)
        if row.status != PaymentStatus.COMPLETED.value or row.confirmation_reference is None:
            raise PaymentNotCompleted()
        assert row.executed_at is not None
        return PaymentConfirmation(
            payment_id=row.payment_id,
            status=PaymentStatus.COMPLETED,
            amount_minor=row.amount_minor,
            currency=row.currency,
            beneficiary_name=row.beneficiary_name,
            beneficiary_account_last4=row.beneficiary_account_last4,
            payment_method=row.payment_method,
            confirmation_reference=row.confirmation_reference,
            executed_at=row.executed_at,
        )

    # ------------------------------------------------------------------------ simulation

    async def advance_payment(
        self, *, company_id: int, payment_id: str, status: PaymentStatus
    ) -> ProviderPayment:
        """Move one payment on (PROCESSING, COMPLETED or FAILED)."""
        await self.sim.enter(company_id, "advance_payment")
        async with unit_of_work(self.factory) as session:
            batch_id = (await self._pay_row(session, company_id, payment_id)).batch_id
            # The batch before its payment: the lock order of the batch moves, which change
            # the batch's payments under the batch's lock.
            batch = await self._pay_batch_row(session, company_id, batch_id, lock=True)
            row = await self._pay_row(session, company_id, payment_id, lock=True)
            await self._pay_change(session, row, status, reason=None)
            await self._pay_close_batch_if_done(session, batch)
            return _payment(row)

    async def advance_batch(self, *, company_id: int, batch_id: str, status: str) -> SimulatedBatch:
        """PROCESSING (its payments follow), COMPLETED (they complete) or CANCELLED (they
        fail and are refunded)."""
        await self.sim.enter(company_id, "advance_payment")
        async with unit_of_work(self.factory) as session:
            batch = await self._pay_batch_row(session, company_id, batch_id, lock=True)
            allowed = {
                BatchStatus.PENDING: {
                    BatchStatus.PROCESSING,
                    BatchStatus.COMPLETED,
                    BatchStatus.CANCELLED,
                },
                BatchStatus.PROCESSING: {BatchStatus.COMPLETED, BatchStatus.CANCELLED},
            }.get(batch.status, set())
            if status not in allowed:
                raise InvalidTransition(
                    f"The payment batch is {batch.status}; it cannot become {status}."
                )
            payments = await self._pay_batch_payments(session, batch.batch_id)
            payment_status = {
                BatchStatus.PROCESSING: PaymentStatus.PROCESSING,
                BatchStatus.COMPLETED: PaymentStatus.COMPLETED,
                BatchStatus.CANCELLED: PaymentStatus.FAILED,
            }[status]
            reason = "BATCH_CANCELLED" if status == BatchStatus.CANCELLED else None
            for row in payments:
                if row.status not in FINAL_PAYMENT and row.status != payment_status.value:
                    await self._pay_change(session, row, payment_status, reason=reason)
            if batch.order_status == OrderStatus.OPEN:
                batch.order_status = (
                    OrderStatus.CANCELLED if status == BatchStatus.CANCELLED else OrderStatus.FILLED
                )
            await self._pay_set_batch_status(session, batch, status, payments)
            return _batch(batch, payments)

    async def cancel_batch_order(self, *, company_id: int, batch_id: str) -> SimulatedBatch:
        """Cancel a batch's open FX order: its payments fail and are refunded."""
        await self.sim.enter(company_id, "advance_payment")
        async with unit_of_work(self.factory) as session:
            batch = await self._pay_batch_row(session, company_id, batch_id, lock=True)
            if (
                batch.order_id is None
                or batch.order_status != OrderStatus.OPEN
                or batch.status in FINAL_BATCH
            ):
                raise NoFxOrder()
            batch.order_status = OrderStatus.CANCELLED
            payments = await self._pay_batch_payments(session, batch.batch_id)
            reason = "FX_ORDER_CANCELLED"
            for row in payments:
                if row.status not in FINAL_PAYMENT:
                    await self._pay_change(session, row, PaymentStatus.FAILED, reason=reason)
            await self.sim.emit_callback(
                session,
                company_id=company_id,
                type_=BATCH_ORDER_CANCELLED,
                data={
                    "batchId": batch.batch_id,
                    "orderId": batch.order_id,
                    "paymentIds": [row.payment_id for row in payments],
                    "reason": reason,
                },
            )
            await self._pay_set_batch_status(session, batch, BatchStatus.CANCELLED, payments)
            return _batch(batch, payments)

    # --------------------------------------------------------------------------- private

    async def _pay_create(
        self,
        session: AsyncSession,
        *,
        company_id: int,
        idempotency_key: str,
        budget_id: str,
        payee_id: str,
        amount_minor: int,
        currency: str,
        debit_currency: str,
        reference: str | None,
    ) -> SandboxBankprovPayment:
        await self.budget_row(session, company_id, budget_id)
        beneficiary = await self._pay_beneficiary(session, company_id, payee_id)
        if beneficiary.currency != currency:
            raise ProviderRejected(
                "The payee is paid in another currency.",
                status=409,
                code="PROVIDER_PAYEE_CURRENCY_MISMATCH",
            )
        price = quote(
            payment_method=beneficiary.payment_method,
            amount_minor=amount_minor,
            currency=currency,
            debit_currency=debit_currency,
        )
        now = utcnow()
        batch_id = f"bp_bat_{uuid.uuid4().hex[:24]}"
        written = await session.scalars(
            select(SandboxBankprovPayment).from_statement(
                insert_ignoring_conflicts(session, SandboxBankprovPayment)
                .values(
                    company_id=company_id,
                    idempotency_key=idempotency_key,
                    batch_id=batch_id,
                    budget_id=budget_id,
                    payee_id=payee_id,
                    payment_method=beneficiary.payment_method,
                    beneficiary_name=beneficiary.name,
                    beneficiary_account_last4=beneficiary.account_last4,
                    amount_minor=price.amount_minor,
                    currency=price.currency,
                    debit_amount_minor=price.debit_amount_minor,
                    debit_currency=price.debit_currency,
                    fee_minor=price.fee_minor,
                    rate=str(price.rate),
                    reference=reference,
                    status=PaymentStatus.PENDING.value,
                    created_at=now,
                    updated_at=now,
                )
                .returning(*_PAYMENTS.c)
            )
        )
        created: SandboxBankprovPayment | None = written.one_or_none()
        if created is None:
            # Another request under the same key wrote it first: the provider's one payment.
            found = await self._pay_by_key(session, idempotency_key)
            assert found is not None
            return found
        converts = currency != debit_currency
        await session.execute(
            insert(_BATCHES).values(
                company_id=company_id,
                batch_id=batch_id,
                budget_id=budget_id,
                status=BatchStatus.PENDING,
                order_id=f"bp_ord_{uuid.uuid4().hex[:24]}" if converts else None,
                order_status=OrderStatus.OPEN if converts else None,
                created_at=now,
                updated_at=now,
            )
        )
        await self.move(
            session,
            company_id=company_id,
            budget_id=budget_id,
            currency=debit_currency,
            amount_minor=-(price.debit_amount_minor + price.fee_minor),
            kind="payment",
            reference=idempotency_key,
        )
        return created

    async def _pay_beneficiary(
        self, session: AsyncSession, company_id: int, payee_id: str
    ) -> _Beneficiary:
        payee = await sandbox_payee(session, company_id=company_id, payee_id=payee_id)
        if payee is None:
            raise PayeeUnknown()
        if payee.status != ProviderPayeeStatus.ACTIVE.value:
            raise ProviderRejected(
                "The payee was removed.", status=409, code="PROVIDER_PAYEE_REMOVED"
            )
        return _Beneficiary(
            payment_method=payee.payment_method,
            name=payee.name,
            account_last4=payee.account_number_last4,
            currency=payee.currency,
        )

    async def _pay_change(
        self,
        session: AsyncSession,
        row: SandboxBankprovPayment,
        status: PaymentStatus,
        *,
        reason: str | None,
    ) -> None:
        allowed = {
            PaymentStatus.PENDING.value: {
                PaymentStatus.PROCESSING,
                PaymentStatus.COMPLETED,
                PaymentStatus.FAILED,
            },
            PaymentStatus.PROCESSING.value: {PaymentStatus.COMPLETED, PaymentStatus.FAILED},
        }.get(row.status, set())
        if status not in allowed:
            raise InvalidTransition(f"The payment is {row.status}; it cannot become {status}.")
        now = utcnow()
        if status is PaymentStatus.FAILED:
            reason = reason or "RETURNED_BY_BENEFICIARY_BANK"
            await self.move(
                session,
                company_id=row.company_id,
                budget_id=row.budget_id,
                currency=row.debit_currency,
                amount_minor=row.debit_amount_minor + row.fee_minor,
                kind="payment_refund",
                reference=row.idempotency_key,
            )
        if status is PaymentStatus.COMPLETED:
            row.executed_at = now
            row.confirmation_reference = _end_to_end_id(row)
        row.status = status.value
        row.reason = reason
        row.updated_at = now
        await session.flush()
        await self.sim.emit_callback(
            session,
            company_id=row.company_id,
            type_=PAYMENT_STATUS_CHANGED,
            data={
                "paymentId": row.payment_id,
                "batchId": row.batch_id,
                "status": row.status,
                "reason": row.reason,
                "idempotencyKey": row.idempotency_key,
            },
        )

    async def _pay_close_batch_if_done(
        self, session: AsyncSession, batch: SandboxBankprovPaymentBatch
    ) -> None:
        payments = await self._pay_batch_payments(session, batch.batch_id)
        if batch.status in FINAL_BATCH or any(p.status not in FINAL_PAYMENT for p in payments):
            return
        done = any(p.status == PaymentStatus.COMPLETED.value for p in payments)
        if batch.order_status == OrderStatus.OPEN:
            batch.order_status = OrderStatus.FILLED if done else OrderStatus.CANCELLED
        await self._pay_set_batch_status(
            session, batch, BatchStatus.COMPLETED if done else BatchStatus.CANCELLED, payments
        )

    async def _pay_set_batch_status(
        self,
        session: AsyncSession,
        batch: SandboxBankprovPaymentBatch,
        status: str,
        payments: Sequence[SandboxBankprovPayment],
    ) -> None:
        batch.status = status
        batch.updated_at = utcnow()
        await session.flush()
        await self.sim.emit_callback(
            session,
            company_id=batch.company_id,
            type_=BATCH_STATUS_CHANGED,
            data={
                "batchId": batch.batch_id,
                "status": status,
                "paymentIds": [row.payment_id for row in payments],
            },
        )

    async def _pay_by_key(
        self, session: AsyncSession, idempotency_key: str
    ) -> SandboxBankprovPayment | None:
        return (
            await session.execute(
                select(SandboxBankprovPayment).where(
                    SandboxBankprovPayment.idempotency_key == idempotency_key
                )
            )
        ).scalar_one_or_none()

    async def _pay_row(
        self, session: AsyncSession, company_id: int, payment_id: str, *, lock: bool = False
    ) -> SandboxBankprovPayment:
        row_id = _row_id(payment_id)
        if row_id is None:
            raise PaymentUnknown()
        stmt = select(SandboxBankprovPayment).where(
            SandboxBankprovPayment.id == row_id, SandboxBankprovPayment.company_id == company_id
        )
        if lock:
            stmt = for_update(stmt).execution_options(populate_existing=True)
        row: SandboxBankprovPayment | None = (await session.execute(stmt)).scalar_one_or_none()
        if row is None:
            raise PaymentUnknown()
        return row

    async def _pay_batch_row(
        self, session: AsyncSession, company_id: int, batch_id: str, *, lock: bool = False
    ) -> SandboxBankprovPaymentBatch:
        stmt = select(SandboxBankprovPaymentBatch).where(
            SandboxBankprovPaymentBatch.batch_id == batch_id,
            SandboxBankprovPaymentBatch.company_id == company_id,
        )
        row: SandboxBankprovPaymentBatch | None = (
            await session.execute(for_update(stmt) if lock else stmt)
        ).scalar_one_or_none()
        if row is None:
            raise BatchUnknown()
        return row

    async def _pay_batch_payments(
        self, session: AsyncSession, batch_id: str
    ) -> list[SandboxBankprovPayment]:
        rows = await session.execute(
            select(SandboxBankprovPayment)
            .where(SandboxBankprovPayment.batch_id == batch_id)
            .order_by(SandboxBankprovPayment.id)
        )
        return list(rows.scalars())


def _end_to_end_id(row: SandboxBankprovPayment) -> str:
    """A stable scheme reference for the executed payment (like a SEPA end-to-end id)."""
    digest = hashlib.sha256(f"e2e:{row.idempotency_key}".encode()).hexdigest()[:24].upper()
    return f"E2E{digest}"
