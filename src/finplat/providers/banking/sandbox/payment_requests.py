"""Sandbox banking provider: payment requests into a budget.

Behaves as the real provider does:
* `create_payment_request` deduplicates by idempotency key and refuses a currency the budget
  does not hold;
* a payer pays a request in full or not at all (`simulate_request_payment`): only while it is
  `PENDING` and before `expires_at` (the provider's own clock; past it the request turns
  `EXPIRED`), and only exactly the requested amount. Paying credits the budget and notifies the
  platform with `payment_request.paid`;
* a paid request cannot be cancelled; cancelling a cancelled or expired request answers it as
  it is.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.db.dialect import for_update
from finplat.db.unit_of_work import unit_of_work
from finplat.kit.clock import utcnow
from finplat.providers.banking.port import (
    PAYMENT_REQUEST_PAID,
    REQUEST_ALREADY_PAID,
    ProviderPaymentRequest,
    ProviderRequestStatus,
)
from finplat.providers.banking.sandbox.budgets import CurrencyNotHeld, SandboxBankingCore
from finplat.providers.banking.sandbox.models import SandboxBankprovPaymentRequest
from finplat.providers.errors import ProviderRejected
from finplat.providers.sandbox.faults import FaultMode

OPERATIONS: tuple[str, ...] = (
    "create_payment_request",
    "cancel_payment_request",
    "payment_request_status",
    "pay_payment_request",
)


class RequestUnknown(ProviderRejected):
    status = 404
    code = "PROVIDER_REQUEST_NOT_FOUND"
    message = "The banking provider has no such payment request."


class RequestPaid(ProviderRejected):
    status = 409
    code = REQUEST_ALREADY_PAID
    message = "The payment request was paid; it cannot be cancelled."


class RequestNotPayable(ProviderRejected):
    status = 409
    code = "PROVIDER_REQUEST_NOT_PAYABLE"
    message = "The payment request is not pending (paid, cancelled or expired)."


class PartialPayment(ProviderRejected):
    status = 400
    code = "PROVIDER_PARTIAL_PAYMENT"
    message = "A payment request is paid in full: the amount must be the requested amount."


_INSERT_REQUEST = insert(SandboxBankprovPaymentRequest)


def _request(row: SandboxBankprovPaymentRequest) -> ProviderPaymentRequest:
    return ProviderPaymentRequest(
        request_id=row.request_id,
        budget_id=row.budget_id,
        currency=row.currency,
        amount_minor=row.amount_minor,
        status=ProviderRequestStatus(row.status),
        expires_at=row.expires_at,
        payment_id=row.payment_id,
        paid_at=row.paid_at,
    )


class SandboxPaymentRequests(SandboxBankingCore):
    async def create_payment_request(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        budget_id: str,
        currency: str,
        amount_minor: int,
        expires_at: datetime,
        description: str | None,
    ) -> ProviderPaymentRequest:
        mode = await self.sim.enter(company_id, "create_payment_request")
        async with unit_of_work(self.factory) as session:
            row = (
                await session.execute(
                    select(SandboxBankprovPaymentRequest).where(
                        SandboxBankprovPaymentRequest.idempotency_key == idempotency_key
                    )
                )
            ).scalar_one_or_none()
            if row is None:
                if await self.balance_of(session, company_id, budget_id, currency) is None:
                    await self.budget_row(session, company_id, budget_id)  # 404 first
                    raise CurrencyNotHeld()
                values = {
                    "company_id": company_id,
                    "request_id": f"bp_prq_{uuid.uuid4().hex[:24]}",
                    "idempotency_key": idempotency_key,
                    "budget_id": budget_id,
                    "currency": currency,
                    "amount_minor": amount_minor,
                    "description": description,
                    "status": ProviderRequestStatus.PENDING.value,
                    "expires_at": expires_at,
                    "created_at": utcnow(),
                }
                await session.execute(_INSERT_REQUEST, values)
                row = SandboxBankprovPaymentRequest(**values)
            elif (row.company_id, row.budget_id, row.currency, row.amount_minor) != (
                company_id,
                budget_id,
                currency,
                amount_minor,
            ):
                raise ProviderRejected(
                    "The provider already issued a different request under this key.",
                    status=409,
                    code="PROVIDER_IDEMPOTENCY_MISMATCH",
                )
            request = _request(self._expired_if_due(row))
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return request

    async def cancel_payment_request(
        self, *, company_id: int, request_id: str
    ) -> ProviderPaymentRequest:
        mode = await self.sim.enter(company_id, "cancel_payment_request")
        async with unit_of_work(self.factory) as session:
            row = self._expired_if_due(await self._locked(session, company_id, request_id))
            if row.status == ProviderRequestStatus.PAID.value:
                raise RequestPaid()
            if row.status == ProviderRequestStatus.PENDING.value:
                row.status = ProviderRequestStatus.CANCELLED.value
                await session.flush()
            request = _request(row)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return request

    async def payment_request(self, *, company_id: int, request_id: str) -> ProviderPaymentRequest:
        await self.sim.enter(company_id, "payment_request_status")
        async with unit_of_work(self.factory) as session:
            row = self._expired_if_due(await self._locked(session, company_id, request_id))
            return _request(row)

    async def simulate_request_payment(
        self, *, company_id: int, request_id: str, amount_minor: int, payer_name: str
    ) -> ProviderPaymentRequest:
        mode = await self.sim.enter(company_id, "pay_payment_request")
        async with unit_of_work(self.factory) as session:
            row = self._expired_if_due(await self._locked(session, company_id, request_id))
            if row.status != ProviderRequestStatus.PENDING.value:
                raise RequestNotPayable(f"The payment request is {row.status}.")
            if amount_minor != row.amount_minor:
                raise PartialPayment()
            payment_id = f"bp_in_{uuid.uuid4().hex[:24]}"
            await self.move(
                session,
                company_id=company_id,
                budget_id=row.budget_id,
                currency=row.currency,
                amount_minor=row.amount_minor,
                kind="payment_request",
                reference=payment_id,
            )
            now = utcnow()
            row.status = ProviderRequestStatus.PAID.value
            row.payment_id = payment_id
            row.paid_at = now
            await session.flush()
            await self.sim.emit_callback(
                session,
                company_id=company_id,
                type_=PAYMENT_REQUEST_PAID,
                data={
                    "requestId": row.request_id,
                    "paymentId": payment_id,
                    "budgetId": row.budget_id,
                    "currency": row.currency,
                    "amountMinor": row.amount_minor,
                    "payerName": payer_name,
                    "paidAt": now.isoformat(),
                },
            )
            request = _request(row)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return request

    # --------------------------------------------------------------------------- private

    async def _locked(
        self, session: AsyncSession, company_id: int, request_id: str
    ) -> SandboxBankprovPaymentRequest:
        row: SandboxBankprovPaymentRequest | None = (
            await session.execute(
                for_update(
                    select(SandboxBankprovPaymentRequest).where(
                        SandboxBankprovPaymentRequest.request_id == request_id,
                        SandboxBankprovPaymentRequest.company_id == company_id,
                    )
                )
            )
        ).scalar_one_or_none()
        if row is None:
            raise RequestUnknown()
        return row

    @staticmethod
    def _expired_if_due(row: SandboxBankprovPaymentRequest) -> SandboxBankprovPaymentRequest:
        if row.status == ProviderRequestStatus.PENDING.value and utcnow() >= row.expires_at:
            row.status = ProviderRequestStatus.EXPIRED.value
        return row
