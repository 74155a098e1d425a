"""Sends the sandbox providers' queued callbacks through the inbound path.

The background job sends them when due (the asynchronous answer a real provider gives);
sandbox endpoints send a company's due callbacks at once so a simulation's effect is visible
in its response.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

import structlog
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db.unit_of_work import unit_of_work
from finplat.events.envelope import timestamp
from finplat.kit.clock import pause, utcnow
from finplat.providers import inbound
from finplat.providers.names import ExternalProvider
from finplat.providers.sandbox.models import SandboxCallback

log = structlog.get_logger("finplat.providers.sandbox")
BATCH = 50
ROUNDS = 20
RETRY_CAP = timedelta(hours=1)


async def deliver_due(
    factory: async_sessionmaker[AsyncSession], *, secret: str, company_id: int | None = None
) -> int:
    """Send every due, unsent callback (of one company, or all), batch after batch, so a
    backlog never hides a new callback behind it (at most `ROUNDS` batches a call); returns how
    many were applied. A callback whose processing fails is tried again after a growing delay,
    so it cannot hold up the ones queued behind it."""
    applied = 0
    for _ in range(ROUNDS):
        selected, sent = await _deliver_batch(factory, secret=secret, company_id=company_id)
        applied += sent
        if selected < BATCH:
            break
    return applied


def retry_delay(attempts: int) -> timedelta:
    """1 s after the first failure, doubling up to an hour."""
    return min(timedelta(seconds=2 ** min(attempts - 1, 12)), RETRY_CAP)


async def _deliver_batch(
    factory: async_sessionmaker[AsyncSession], *, secret: str, company_id: int | None
) -> tuple[int, int]:
    async with unit_of_work(factory) as session:
        stmt = (
            select(SandboxCallback)
            .where(SandboxCallback.sent_at.is_(None), SandboxCallback.due_at <= utcnow())
            .order_by(SandboxCallback.id)
            .limit(BATCH)
        )
        if company_id is not None:
            stmt = stmt.where(SandboxCallback.company_id == company_id)
        due = list((await session.execute(stmt)).scalars())
    sent = 0
    for callback in due:
        body = inbound.render(
            event_id=callback.event_id,
            type_=callback.type,
            company_id=callback.company_id,
            created_at=timestamp(callback.created_at),
            data=callback.payload,
        )
        headers = inbound.signature_headers(secret, body)
        try:
            await inbound.receive(
                factory,
                provider=ExternalProvider(callback.provider),
                body=body,
                signature=headers[inbound.SIGNATURE_HEADER],
                timestamp=headers[inbound.TIMESTAMP_HEADER],
                secret=secret,
            )
        except Exception as exc:
            log.warning(
                "sandbox_callback_failed",
                provider=callback.provider,
                type=callback.type,
                error_type=type(exc).__name__,
            )
            async with unit_of_work(factory) as session:
                await session.execute(
                    update(SandboxCallback)
                    .where(SandboxCallback.id == callback.id)
                    .values(
                        attempts=SandboxCallback.attempts + 1,
                        due_at=utcnow() + retry_delay(callback.attempts + 1),
                    )
                )
            continue
        async with unit_of_work(factory) as session:
            await session.execute(
                update(SandboxCallback)
                .where(SandboxCallback.id == callback.id)
                .values(sent_at=utcnow(), attempts=SandboxCallback.attempts + 1)
            )
        sent += 1
    return len(due), sent


async def run_forever(
    factory: async_sessionmaker[AsyncSession],
    *,
    secret: str,
    stop: asyncio.Event,
    poll_seconds: float,
) -> None:
    while not stop.is_set():
        try:
            await deliver_due(factory, secret=secret)
        except Exception as exc:  # keep the loop alive through a database hiccup
            log.error("sandbox_callback_loop_error", error_type=type(exc).__name__)
        await pause(stop, poll_seconds)
