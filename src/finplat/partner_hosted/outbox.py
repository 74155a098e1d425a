"""What finplat tells the partner after the decision (reversals, clearings, refunds,
adjustments): written in the transaction of the change it reports, sent by the worker until the
partner acknowledges it.

The machinery is the webhooks' (`finplat.events`): the same retry schedule and outcome rules
(`events.schedule`, `events.worker.classify`: 2xx delivered; timeouts, network errors, 3xx,
408, 429 and 5xx retried for about 76 hours; another 4xx is a permanent failure), the same
leases (`FOR UPDATE SKIP LOCKED`, so several workers are safe) and the same pinned HTTP client.
A delivery's id is its `IdempotencyId` (in the body and the `Idempotency-Key` header) on every
attempt, so the partner applies each one once however often it arrives; a purchase event
creates at most one delivery (`source` is unique per company).
"""

from __future__ import annotations

import asyncio
import secrets
import time
import uuid
from datetime import timedelta
from enum import StrEnum
from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.events.worker import AttemptResult, classify
from finplat.kit.clock import pause, utcnow
from finplat.partner_hosted import client, repository
from finplat.partner_hosted.models import PartnerDelivery
from finplat.partner_hosted.repository import PartnerDeliveryRepository

log = structlog.get_logger("finplat.partner_hosted")


class Operation(StrEnum):
    REVERSAL = "reversals"
    CLEARING = "clearings"
    REFUND = "refunds"
    ADJUSTMENT = "adjustments"


def new_delivery_id() -> str:
    return f"ptd_{uuid.uuid4().hex}"


async def enqueue(
    session: AsyncSession,
    *,
    company_id: int,
    operation: Operation,
    source: str,
    payload: dict[str, Any],
) -> PartnerDelivery:
    """Queue one notification for the partner, once per `source`."""
    deliveries = PartnerDeliveryRepository(session, company_id)
    existing = await deliveries.by_source(source)
    if existing is not None:
        return existing
    delivery_id = new_delivery_id()
    now = utcnow()
    return await deliveries.add(
        PartnerDelivery(
            id=delivery_id,
            source=source[:120],
            operation=operation.value,
            body=client.render({"IdempotencyId": delivery_id, **payload}).decode(),
            status=repository.PENDING,
            attempts=0,
            next_attempt_at=now,
            created_at=now,
        )
    )


class PartnerDeliveryWorker:
    def __init__(
        self,
        factory: async_sessionmaker[AsyncSession],
        *,
        allow_loopback: bool,
        timeout: float = 10.0,
        lease: timedelta = timedelta(seconds=60),
        batch_size: int = 50,
    ) -> None:
        self.factory = factory
        self.allow_loopback = allow_loopback
        self.timeout = timeout
        self.lease = lease
        self.batch_size = batch_size

    async def run_forever(self, stop: asyncio.Event, *, poll_seconds: float = 1.0) -> None:
        while not stop.is_set():
            try:
                sent = await self.run_once()
            except Exception as exc:  # keep delivering after a database hiccup
                log.error("partner_worker_error", error_type=type(exc).__name__)
                sent = 0
            if sent == 0:
                await pause(stop, poll_seconds)

    async def run_once(self) -> int:
        """Lease and send one batch of due deliveries; returns how many were attempted."""
        token = secrets.token_hex(16)
        now = utcnow()
        async with unit_of_work(self.factory) as session:
            due = await repository.claim_due(
                session, now=now, limit=self.batch_size, token=token, locked_until=now + self.lease
            )
        if not due:
            return 0
        await asyncio.gather(*(self._deliver(token, row) for row in due))
        return len(due)

    async def _deliver(self, token: str, row: dict[str, Any]) -> None:
        attempt = int(row["attempts"]) + 1
        async with unit_of_work(self.factory) as session:
            bind_company(session, row["company_id"])
            config = await repository.config_of(session, row["company_id"])
            partner = (
                None
                if config is None
                else client.Partner(
                    base_url=config.base_url,
                    api_key=config.api_key,
                    signing_secret=row["webhook_secret"],
                    allow_loopback=self.allow_loopback,
                )
            )
        started = time.perf_counter()
        if partner is None:
            result = AttemptResult(None, "partner-hosted balances are not configured", None, 0)
            outcome: dict[str, Any] = {"status": repository.FAILED, "next_attempt_at": None}
        else:
            reply = await client.call(
                partner,
                "POST",
                f"/{row['operation']}",
                body=row["body"].encode(),
                timeout_seconds=self.timeout,
                idempotency_id=row["id"],
            )
            code = reply.status_code
            error = reply.error or (
                None if code is not None and 200 <= code < 300 else f"the partner answered {code}"
            )
            result = AttemptResult(code, error, None, int((time.perf_counter() - started) * 1000))
            outcome = classify(result, attempt, utcnow())
        async with unit_of_work(self.factory) as session:
            recorded = await repository.record_attempt(
                session,
                delivery_id=row["id"],
                token=token,
                status_code=result.status_code,
                error=result.error,
                outcome=outcome,
            )
        log.info(
            "partner_delivery_attempt",
            delivery_id=row["id"],
            company_id=row["company_id"],
            operation=row["operation"],
            attempt=attempt,
            status_code=result.status_code,
            outcome=outcome["status"],
            recorded=recorded,
        )
