"""Sandbox providers' queued callbacks: a backlog never hides a new callback, and one that
fails to apply steps aside instead of holding up the queue."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.config import Settings
from finplat.kit.clock import utcnow
from finplat.providers import inbound
from finplat.providers.sandbox import delivery as sandbox_delivery
from finplat.providers.sandbox import emissions
from finplat.providers.sandbox.models import SandboxCallback
from tests.banking.steps import banking_user, credit, default_budget
from tests.conftest import Tenant
from tests.isolated import isolated


async def _queue(
    factory: async_sessionmaker[AsyncSession],
    company_id: int,
    count: int,
    *,
    type_: str = "card.transaction",
    data: dict[str, object] | None = None,
    name: str = "backlog",
) -> list[str]:
    """Callbacks the card provider has queued (for a card nobody holds: applied as no-ops)."""
    event_ids = [f"cardprov_evt_{name}_{company_id}_{type_}_{i}" for i in range(count)]
    async with factory() as session, session.begin():
        now = utcnow()
        for event_id in event_ids:
            session.add(
                SandboxCallback(
                    provider="cardprov",
                    event_id=event_id,
                    company_id=company_id,
                    type=type_,
                    payload=json.dumps(data or {"cardId": "cardprov_card_nobody"}),
                    created_at=now,
                    due_at=now,
                )
            )
    return event_ids


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


async def test_parallel_deliveries_of_one_company_send_each_callback_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    received: Counter[str] = Counter()
    receive = inbound.receive

    async def counted(factory: async_sessionmaker[AsyncSession], **kwargs: Any) -> Any:
        received[json.loads(kwargs["body"])["id"]] += 1
        return await receive(factory, **kwargs)

    monkeypatch.setattr(inbound, "receive", counted)
    async with isolated("callbackclaims", database_pool_size=20) as env:
        factory = env.app.state.session_factory
        await _queue(factory, env.company_id, 2 * sandbox_delivery.BATCH)
        secret = env.app.state.settings.provider_callback_secret
        await asyncio.gather(
            *(
                sandbox_delivery.deliver_due(factory, secret=secret, company_id=env.company_id)
                for _ in range(6)
            )
        )
        assert len(received) == 2 * sandbox_delivery.BATCH
        assert set(received.values()) == {1}
        assert await _unsent(factory, env.company_id) == 0


async def _claim_all(
    factory: async_sessionmaker[AsyncSession], company_id: int, *, until: datetime
) -> None:
    """Another delivery has claimed the company's callbacks until `until`."""
    async with factory() as session, session.begin():
        await session.execute(
            update(SandboxCallback)
            .where(SandboxCallback.company_id == company_id)
            .values(lock_token="another", locked_until=until)
        )


async def test_a_delivery_returns_only_after_another_has_sent_the_callbacks_it_claimed() -> None:
    async with isolated("callbackclaims") as env:
        factory = env.app.state.session_factory
        await _queue(factory, env.company_id, 3)
        await _claim_all(factory, env.company_id, until=utcnow() + timedelta(minutes=1))

        async def the_other_sends() -> None:
            await asyncio.sleep(0.2)
            async with factory() as session, session.begin():
                await session.execute(
                    update(SandboxCallback)
                    .where(SandboxCallback.company_id == env.company_id)
                    .values(sent_at=utcnow(), lock_token=None, locked_until=None)
                )

        other = asyncio.create_task(the_other_sends())
        applied = await sandbox_delivery.deliver_due(
            factory,
            secret=env.app.state.settings.provider_callback_secret,
            company_id=env.company_id,
        )
        assert applied == 0
        assert other.done()
        assert await _unsent(factory, env.company_id) == 0


async def test_callbacks_whose_claim_lapsed_are_sent_by_the_next_delivery(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    await _queue(session_factory, tenant.company_id, 3)
    await _claim_all(session_factory, tenant.company_id, until=utcnow() - timedelta(seconds=1))
    applied = await sandbox_delivery.deliver_due(
        session_factory, secret=settings.provider_callback_secret, company_id=tenant.company_id
    )
    assert applied == 3
    assert await _unsent(session_factory, tenant.company_id) == 0


async def _sent(factory: async_sessionmaker[AsyncSession], event_ids: list[str]) -> list[str]:
    async with factory() as session:
        rows = await session.execute(
            select(SandboxCallback.event_id).where(
                SandboxCallback.event_id.in_(event_ids), SandboxCallback.sent_at.is_not(None)
            )
        )
        return list(rows.scalars())


async def _request_in_flight(
    factory: async_sessionmaker[AsyncSession],
    company_id: int,
    name: str,
    queued: asyncio.Event,
    finished: asyncio.Event,
) -> list[str]:
    """A sandbox request that queues two callbacks of its own (`queued` set then) and ends
    without sending them when `finished` is set; returns their event ids."""
    request = emissions.collecting()
    await anext(request)
    own = await _queue(factory, company_id, 2, name=name)
    for event_id in own:
        emissions.note(event_id)
    queued.set()
    await finished.wait()
    await request.aclose()
    return own


async def test_a_sandbox_request_sends_its_own_callbacks_not_those_another_request_will_send() -> (
    None
):
    async with isolated("callbackclaims") as env:
        factory = env.app.state.session_factory
        secret = env.app.state.settings.provider_callback_secret
        queued, finished = asyncio.Event(), asyncio.Event()

        async def this_request() -> list[str]:
            request = emissions.collecting()
            await anext(request)
            await queued.wait()
            mine = await _queue(factory, env.company_id, 2, name="mine")
            for event_id in mine:
                emissions.note(event_id)
            await sandbox_delivery.deliver_due(factory, secret=secret, company_id=env.company_id)
            await request.aclose()
            return mine

        other = asyncio.create_task(
            _request_in_flight(factory, env.company_id, "theirs", queued, finished)
        )
        mine = await this_request()
        assert sorted(await _sent(factory, mine)) == sorted(mine)
        finished.set()
        theirs = await other
        assert await _sent(factory, theirs) == []
        await sandbox_delivery.deliver_due(factory, secret=secret, company_id=env.company_id)
        assert sorted(await _sent(factory, theirs)) == sorted(theirs)


async def test_the_background_delivery_leaves_a_request_its_own_callbacks_until_it_ends() -> None:
    async with isolated("callbackjob") as env:
        factory = env.app.state.session_factory
        secret = env.app.state.settings.provider_callback_secret
        queued, finished = asyncio.Event(), asyncio.Event()

        task = asyncio.create_task(
            _request_in_flight(factory, env.company_id, "inflight", queued, finished)
        )
        await queued.wait()
        backlog = await _queue(factory, env.company_id, 1, name="nobodys")
        await sandbox_delivery.deliver_due(factory, secret=secret)  # the background job's call
        assert await _sent(factory, backlog) == backlog
        finished.set()
        own = await task
        assert await _sent(factory, own) == []
        await sandbox_delivery.deliver_due(factory, secret=secret)
        assert sorted(await _sent(factory, own)) == sorted(own)
