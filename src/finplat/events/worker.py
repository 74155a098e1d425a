"""The webhook delivery worker.

Runs in-process under `finplat serve` and standalone as `finplat worker`; several at once are
safe: each leases a batch of due deliveries (`FOR UPDATE SKIP LOCKED` on PostgreSQL), and a
worker that dies loses only its lease, after which another worker picks the deliveries up.
Delivery is at least once; the `X-Service-Webhook-Id` lets receivers drop duplicates.

Outcomes: 2xx delivered; network errors, timeouts, 3xx, 408, 429 (honouring `Retry-After`)
and 5xx retried on the schedule in `events.schedule`; 410 disables the endpoint; any other 4xx
is a permanent failure. Time comes from `finplat.kit.clock`, so tests can run the 76-hour
schedule in seconds.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db.unit_of_work import unit_of_work
from finplat.errors import ApiError
from finplat.events import repository, schedule
from finplat.events.delivery_client import DeliveryClient
from finplat.events.destinations import vetted_destination
from finplat.kit.clock import pause, utcnow
from finplat.kit.signing import service_signature, standard_signature

log = structlog.get_logger("finplat.webhooks")

USER_AGENT = "finplat-webhooks/1"
RETRYABLE_STATUSES = {408, 429}


@dataclass(frozen=True)
class AttemptResult:
    status_code: int | None
    error: str | None
    retry_after: timedelta | None
    duration_ms: int


def _retry_after(response: httpx.Response, now: datetime) -> timedelta | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    if value.strip().isdigit():
        return timedelta(seconds=int(value.strip()))
    try:
        return parsedate_to_datetime(value) - now
    except (TypeError, ValueError):
        return None


def classify(result: AttemptResult, attempt: int, now: datetime) -> dict[str, Any]:
    """The delivery's new state after an attempt."""
    code = result.status_code
    if code is not None and 200 <= code < 300:
        return {"status": repository.SUCCEEDED, "delivered_at": now, "next_attempt_at": None}
    retryable = code is None or code >= 500 or code in RETRYABLE_STATUSES or 300 <= code < 400
    if retryable:
        delay = schedule.delay_after(
            attempt, retry_after=result.retry_after if code in (429, 503) else None
        )
        if delay is not None:
            return {"status": repository.RETRYING, "next_attempt_at": now + delay}
    return {"status": repository.FAILED, "next_attempt_at": None}


class WebhookWorker:
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

    def http_client(self) -> DeliveryClient:
        return DeliveryClient(timeout=self.timeout, headers={"user-agent": USER_AGENT})

    async def run_forever(self, stop: asyncio.Event, *, poll_seconds: float = 1.0) -> None:
        async with self.http_client() as client:
            while not stop.is_set():
                try:
                    sent = await self.run_once(client)
                except Exception as exc:  # keep delivering after a database hiccup
                    log.error("webhook_worker_error", error_type=type(exc).__name__)
                    sent = 0
                if sent == 0:
                    await pause(stop, poll_seconds)

    async def run_once(self, client: DeliveryClient) -> int:
        """Lease and send one batch of due deliveries; returns how many were attempted."""
        token = secrets.token_hex(16)
        now = utcnow()
        async with unit_of_work(self.factory) as session:
            due = await repository.claim_due(
                session, now=now, limit=self.batch_size, token=token, locked_until=now + self.lease
            )
        if not due:
            return 0
        await asyncio.gather(*(self._deliver(client, token, row) for row in due))
        return len(due)

    async def _deliver(self, client: DeliveryClient, token: str, row: dict[str, Any]) -> None:
        attempt = int(row["attempts"]) + 1
        url: str | None = row["webhook_url"]
        if not url or row["webhook_disabled_at"] is not None:
            result = AttemptResult(None, "endpoint not configured or disabled", None, 0)
            await self._finish(row, token, attempt, result, permanent=True)
            return
        body: bytes = row["body"].encode()
        result = await self._post(client, url, body, row["id"], row["webhook_secret"], attempt)
        gone = result.status_code == 410
        await self._finish(row, token, attempt, result, permanent=False, gone=gone)

    async def _post(
        self,
        client: DeliveryClient,
        url: str,
        body: bytes,
        delivery_id: str,
        secret: str,
        attempt: int,
    ) -> AttemptResult:
        started = time.perf_counter()
        try:
            destination = await vetted_destination(url, allow_loopback=self.allow_loopback)
        except ApiError as refused:
            return AttemptResult(None, refused.message[:300], None, 0)
        now = utcnow()
        unix = int(now.timestamp())
        headers = {
            "content-type": "application/json",
            "user-agent": USER_AGENT,
            "X-Service-Signature": service_signature(secret, body),
            "X-Service-Webhook-Id": delivery_id,
            "X-Service-Delivery-Attempt": str(attempt),
            "webhook-id": delivery_id,
            "webhook-timestamp": str(unix),
            "webhook-signature": standard_signature(secret, delivery_id, unix, body),
        }
        try:
            # To the checked addresses only (the next one when a connection is refused),
            # never to a fresh lookup of the name.
            response = await client.post(destination, content=body, headers=headers)
        except httpx.TimeoutException:
            return AttemptResult(None, "timeout", None, _ms(started))
        except httpx.HTTPError as exc:
            return AttemptResult(None, f"network error: {type(exc).__name__}", None, _ms(started))
        code = response.status_code
        error = None if 200 <= code < 300 else f"the endpoint answered HTTP {code}"
        return AttemptResult(code, error, _retry_after(response, now), _ms(started))

    async def _finish(
        self,
        row: dict[str, Any],
        token: str,
        attempt: int,
        result: AttemptResult,
        *,
        permanent: bool,
        gone: bool = False,
    ) -> None:
        now = utcnow()
        if gone:
            outcome: dict[str, Any] = {"status": repository.FAILED, "next_attempt_at": None}
        elif permanent:
            outcome = {"status": repository.FAILED, "next_attempt_at": None}
        else:
            outcome = classify(result, attempt, now)
        async with unit_of_work(self.factory) as session:
            recorded = await repository.record_attempt(
                session,
                delivery_id=row["id"],
                token=token,
                attempt=attempt,
                status_code=result.status_code,
                error=result.error,
                duration_ms=result.duration_ms,
                now=now,
                outcome=outcome,
            )
            if recorded and gone:
                await repository.disable_endpoint(session, company_id=row["company_id"], now=now)
        log.info(
            "webhook_attempt",
            delivery_id=row["id"],
            company_id=row["company_id"],
            attempt=attempt,
            status_code=result.status_code,
            outcome=outcome["status"],
            recorded=recorded,
        )


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
