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
"""

from __future__ import annotations

from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking.payouts import settlement
from finplat.banking.payouts.repository import PayoutTransactionRepository
from finplat.events import service as events
from finplat.providers import inbound
from finplat.providers.banking.payments_port import (
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


@inbound.handler(BANKPROV, PAYMENT_STATUS_CHANGED)
async def on_payment_status(session: AsyncSession, company_id: int, data: dict[str, Any]) -> None:
    payment_id = str(data["paymentId"])
    key = data.get("idempotencyKey")
    tx = await _payout(session, company_id, payment_id, str(key) if key else None)
    if tx is None:
        log.info("payment_callback_for_unknown_payout")
        return
    await settlement.settle(
        session,
        company_id=company_id,
        tx_id=tx.id,
        status=PaymentStatus(str(data["status"])),
        reason=str(data["reason"]) if data.get("reason") else None,
        payment_id=payment_id,
        batch_id=str(data["batchId"]) if data.get("batchId") else None,
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
