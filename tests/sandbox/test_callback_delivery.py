"""Sandbox providers' queued callbacks: a backlog never hides a new callback, and one that
fails to apply steps aside instead of holding up the queue."""

from __future__ import annotations

import json
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.config import Settings
from finplat.kit.clock import utcnow
from finplat.providers.sandbox import delivery as sandbox_delivery
from finplat.providers.sandbox.models import SandboxCallback
from tests.banking.steps import banking_user, credit, default_budget
from tests.conftest import Tenant


async def _queue(
    factory: async_sessionmaker[AsyncSession],
    company_id: int,
    count: int,
    *,
    type_: str = "card.transaction",
    data: dict[str, object] | None = None,
) -> None:
    """Callbacks the card provider has queued (for a card nobody holds: applied as no-ops)."""
    async with factory() as session, session.begin():
        now = utcnow()
        for i in range(count):
            session.add(
                SandboxCallback(
                    provider="cardprov",
                    event_id=f"cardprov_evt_backlog_{company_id}_{type_}_{i}",
                    company_id=company_id,
                    type=type_,
                    payload=json.dumps(data or {"cardId": "cardprov_card_nobody"}),
                    created_at=now,
                    due_at=now,
                )
            )


async def _unsent(factory: async_sessionmaker[AsyncSession], company_id: int) -> int:
    async with factory() as session:
        rows = await session.execute(
            select(SandboxCallback.id).where(
                SandboxCallback.company_id == company_id, SandboxCallback.sent_at.is_(None)
            )
        )
        return len(rows.all())


async def test_a_simulated_credit_behind_a_backlog_of_callbacks_is_applied_at_once(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    user = await banking_user(tenant.client)
    budget = await default_budget(tenant.client, user["Id"])
    await _queue(session_factory, tenant.company_id, 3 * sandbox_delivery.BATCH)
    credited = await credit(tenant.client, user["Id"], budget["BudgetId"], "25.00")
    assert credited["Status"] == "COMPLETED"
    assert await _unsent(session_factory, tenant.company_id) == 0


async def test_a_callback_that_fails_to_apply_is_retried_later_not_at_once(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    await _queue(
        session_factory,
        tenant.company_id,
        1,
        type_="card.status_changed",
        data={"cardId": "cardprov_card_nobody", "status": "NOT_A_STATUS"},
    )
    secret = settings.provider_callback_secret
    before = utcnow()
    assert await sandbox_delivery.deliver_due(session_factory, secret=secret) == 0
    assert await sandbox_delivery.deliver_due(session_factory, secret=secret) == 0
    async with session_factory() as session:
        failed = (
            await session.execute(
                select(SandboxCallback).where(SandboxCallback.company_id == tenant.company_id)
            )
        ).scalar_one()
    assert failed.sent_at is None
    assert failed.attempts == 1  # the second round found it not due yet
    assert failed.due_at >= before + timedelta(seconds=1)


def test_retry_delays_double_up_to_an_hour() -> None:
    delays = [sandbox_delivery.retry_delay(n) for n in (1, 2, 3, 13, 40)]
    assert delays == [
        timedelta(seconds=1),
        timedelta(seconds=2),
        timedelta(seconds=4),
        timedelta(hours=1),
        timedelta(hours=1),
    ]
