"""The banking provider's payment callbacks.

* `payment.status_changed` `{paymentId, batchId, status, reason, idempotencyKey}`: settle the
  payout (found by the provider's payment id, or by the key it was created under when the
  answer to the creation was lost).
* `payment_batch.status_changed` `{batchId, status, paymentIds}`: when a batch enters
  processing, the `paymentbatch.processing` event (domain `paymentbatch`). Its payments'
  own outcomes arrive as `payment.status_changed`.
* `payment_batch_order.cancelled` `{batchId, orderId, paymentIds, reason}`: the batch's FX
  order was cancelled, so its payments failed: settle them `FAILED` and record the
  `paymentbatchorder.cancelled` event (domain `paymentbatchorder`).

`payment.status_changed` is read with `PaymentStatusChanged` before anything is written: ids
within the columns that keep them, a known status, text where text is expected. Anything else
is 400 `MALFORMED_CALLBACK` naming the field (see `providers.inbound`).
"""

from __future__ import annotations

from typing import Annotated, Any

import structlog
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking.payouts import settlement
from finplat.banking.payouts.repository import PayoutTransactionRepository
from finplat.events import service as events
from finplat.kit.fields import SafeText
from finplat.providers import inbound
from finplat.providers.banking.port import (
    BATCH_ORDER_CANCELLED,
    BATCH_STATUS_CHANGED,
    PAYMENT_STATUS_CHANGED,
    PaymentStatus,
)
from finplat.providers.names import BankProvider, ExternalProvider
from finplat.transactions.models import Transaction

PROVIDER = BankProvider.BANKPROV.value
BANKPROV = ExternalProvider.BANKPROV.value
log = structlog.get_logger("finplat.banking.payouts")


async def _payout(
    session: AsyncSession, company_id: int, payment_id: str, key: str | None = None
) -> Transaction | None:
    repo = PayoutTransactionRepository(session, company_id)
    found = await repo.by_provider_reference(PROVIDER, payment_id)
    if found is None and key:
        found = await repo.by_provider_key(PROVIDER, key)
    return found


# The provider's ids, as the columns that keep them hold them (`provider_reference` and
# `provider_key` are VARCHAR(64)).
ProviderId = Annotated[SafeText, Field(max_length=64)]


class PaymentStatusChanged(BaseModel):
    """The `data` of `payment.status_changed`, with its JSON types (strict: a number, list or
    null `paymentId` is refused, never stored as its `str()`); fields the provider adds are
    ignored. `reason` is kept as the payout's `StatusReason` (its first 200 characters)."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    paymentId: ProviderId
    batchId: ProviderId | None = None
    status: Annotated[PaymentStatus, Field(strict=False)]
    reason: str | None = None
    idempotencyKey: ProviderId | None = None


@inbound.handler(BANKPROV, PAYMENT_STATUS_CHANGED)
async def on_payment_status(session: AsyncSession, company_id: int, data: dict[str, Any]) -> None:
    payment = PaymentStatusChanged.model_validate(data)
    tx = await _payout(session, company_id, payment.paymentId, payment.idempotencyKey)
    if tx is None:
        log.info("payment_callback_for_unknown_payout")
        return
    await settlement.settle(
        session,
        company_id=company_id,
        tx_id=tx.id,
        status=payment.status,
        reason=payment.reason or None,
        payment_id=payment.paymentId,
        batch_id=payment.batchId,
    )


async def _batch_payouts(
    session: AsyncSession, company_id: int, payment_ids: list[Any]
) -> list[Transaction]:
    found = []
    for payment_id in payment_ids:
        tx = await _payout(session, company_id, str(payment_id))
        if tx is not None:
            found.append(tx)
    return found


@inbound.handler(BANKPROV, BATCH_STATUS_CHANGED)
async def on_batch_status(session: AsyncSession, company_id: int, data: dict[str, Any]) -> None:
    status = str(data["status"])
    if status != PaymentStatus.PROCESSING.value:
        return
    payouts = await _batch_payouts(session, company_id, list(data["paymentIds"]))
    await events.record(
        session,
        company_id=company_id,
        type_="paymentbatch.processing",
        domain="paymentbatch",
        provider=PROVIDER,
        data={
            "batchId": str(data["batchId"]),
            "status": status,
            "transactionIds": [tx.id for tx in payouts],
            "userIds": sorted({tx.user_id for tx in payouts}),
        },
    )


@inbound.handler(BANKPROV, BATCH_ORDER_CANCELLED)
async def on_batch_order_cancelled(
    session: AsyncSession, company_id: int, data: dict[str, Any]
) -> None:
    reason = str(data.get("reason") or "FX_ORDER_CANCELLED")
    batch_id = str(data["batchId"])
    payouts = await _batch_payouts(session, company_id, list(data["paymentIds"]))
    for tx in payouts:
        await settlement.settle(
            session,
            company_id=company_id,
            tx_id=tx.id,
            status=PaymentStatus.FAILED,
            reason=reason,
            batch_id=batch_id,
        )
    await events.record(
        session,
        company_id=company_id,
        type_="paymentbatchorder.cancelled",
        domain="paymentbatchorder",
        provider=PROVIDER,
        data={
            "batchId": batch_id,
            "orderId": str(data["orderId"]),
            "transactionIds": [tx.id for tx in payouts],
            "reason": reason,
        },
    )
