"""SQL for events and webhook deliveries."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Select, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.companies.models import Company
from finplat.db.dialect import for_update, is_postgresql
from finplat.db.repository import CompanyRepository
from finplat.events.models import Event, WebhookAttempt, WebhookDelivery

# A delivery's states. `pending`: queued, not yet attempted (since creation or a manual retry
# of a failed one); `retrying`: an attempt failed and the next is scheduled (`next_attempt_at`);
# `succeeded`: acknowledged with a 2xx; `failed`: given up (a permanent failure or the last
# attempt); `endpoint_disabled`: parked while a 410 has the endpoint disabled.
PENDING = "pending"
RETRYING = "retrying"
SUCCEEDED = "succeeded"
FAILED = "failed"
ENDPOINT_DISABLED = "endpoint_disabled"
# The states the worker sends, when `next_attempt_at` has come.
QUEUED = (PENDING, RETRYING)


class EventRepository(CompanyRepository[Event]):
    model = Event

    async def get_by_id(self, event_id: str) -> Event | None:
        stmt = self.scoped().where(Event.id == event_id)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    def listing(self, *, event_type: str | None) -> Select[Event]:
        stmt = self.scoped()
        if event_type is not None:
            stmt = stmt.where(Event.type == event_type)
        return stmt.order_by(Event.created_at.desc(), Event.id.desc())


class DeliveryRepository(CompanyRepository[WebhookDelivery]):
    model = WebhookDelivery

    async def get_by_id(self, delivery_id: str, *, lock: bool = False) -> WebhookDelivery | None:
        stmt = self.scoped().where(WebhookDelivery.id == delivery_id)
        if lock:
            stmt = for_update(stmt).execution_options(populate_existing=True)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    def listing(self, *, status: str | None, event_id: str | None) -> Select[WebhookDelivery]:
        stmt = self.scoped()
        if status is not None:
            stmt = stmt.where(WebhookDelivery.status == status)
        if event_id is not None:
            stmt = stmt.where(WebhookDelivery.event_id == event_id)
        return stmt.order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id.desc())

    async def for_event(self, event_id: str) -> list[WebhookDelivery]:
        stmt = self.scoped().where(WebhookDelivery.event_id == event_id)
        return list((await self.session.execute(stmt)).scalars())


# --------------------------------------------------------- worker queries (system scope)


async def claim_due(
    session: AsyncSession, *, now: datetime, limit: int, token: str, locked_until: datetime
) -> list[dict[str, Any]]:
    """Lease up to `limit` due deliveries to this worker; other workers skip them."""
    stmt = (
        select(WebhookDelivery.id)
        .where(
            WebhookDelivery.status.in_(QUEUED),
            WebhookDelivery.next_attempt_at <= now,
            or_(WebhookDelivery.locked_until.is_(None), WebhookDelivery.locked_until <= now),
        )
        .order_by(WebhookDelivery.next_attempt_at)
        .limit(limit)
    )
    if is_postgresql(session):
        stmt = for_update(stmt, skip_locked=True)
    ids = list((await session.execute(stmt)).scalars())
    if not ids:
        return []
    await session.execute(
        update(WebhookDelivery)
        .where(WebhookDelivery.id.in_(ids))
        .values(lock_token=token, locked_until=locked_until),
        execution_options={"synchronize_session": False},
    )
    rows = await session.execute(
        select(
            WebhookDelivery.id,
            WebhookDelivery.attempts,
            WebhookDelivery.company_id,
            Event.body,
            Company.webhook_url,
            Company.webhook_secret,
            Company.webhook_disabled_at,
        )
        .join(Event, Event.id == WebhookDelivery.event_id)
        .join(Company, Company.id == WebhookDelivery.company_id)
        .where(WebhookDelivery.id.in_(ids))
    )
    return [dict(row._mapping) for row in rows]


async def record_attempt(
    session: AsyncSession,
    *,
    delivery_id: str,
    token: str,
    attempt: int,
    status_code: int | None,
    error: str | None,
    duration_ms: int,
    now: datetime,
    outcome: dict[str, Any],
) -> bool:
    """Write an attempt's outcome, only while this worker still holds the delivery's lease."""
    result = await session.execute(
        update(WebhookDelivery)
        .where(WebhookDelivery.id == delivery_id, WebhookDelivery.lock_token == token)
        .values(
            attempts=attempt,
            last_status_code=status_code,
            last_error=error,
            last_attempt_at=now,
            lock_token=None,
            locked_until=None,
            **outcome,
        ),
        execution_options={"synchronize_session": False},
    )
    if int(result.rowcount) != 1:  # type: ignore[attr-defined]
        return False
    await session.execute(
        insert(WebhookAttempt).values(
            delivery_id=delivery_id,
            attempt=attempt,
            status_code=status_code,
            error=error,
            duration_ms=duration_ms,
            attempted_at=now,
        )
    )
    return True


async def disable_endpoint(session: AsyncSession, *, company_id: int, now: datetime) -> None:
    await session.execute(
        update(Company).where(Company.id == company_id).values(webhook_disabled_at=now),
        execution_options={"synchronize_session": False},
    )
    await session.execute(
        update(WebhookDelivery)
        .where(WebhookDelivery.company_id == company_id, WebhookDelivery.status.in_(QUEUED))
        .values(status=ENDPOINT_DISABLED, next_attempt_at=None),
        execution_options={"synchronize_session": False},
    )
