"""Real parallel requests and transactions against PostgreSQL (skipped on SQLite, whose single
writer makes these races impossible by construction)."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select

from finplat.db.unit_of_work import unit_of_work
from finplat.jobs import webhook_worker
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.models import LedgerTransfer
from finplat.ledger.verification import verify
from finplat.providers.funding.sandbox.models import SandboxFundingConfirmation
from tests.databases import backend
from tests.isolated import Isolated, isolated
from tests.receiver import Receiver

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")


async def test_50_concurrent_identical_requests_have_one_effect_and_one_provider_call() -> None:
    async with isolated("conc", database_pool_size=30, sandbox_latency_ms=50) as env:
        responses = await asyncio.gather(
            *(
                env.client.post(
                    "/api/v2/sandbox/company/funding",
                    json={"Currency": "USD", "Amount": 1234.56},
                    headers={"Idempotency-Key": "the-one"},
                )
                for _ in range(50)
            )
        )
        assert [r.status_code for r in responses] == [200] * 50
        assert len({r.content for r in responses}) == 1
        async with env.app.state.session_factory() as session:
            calls = (
                (await session.execute(select(SandboxFundingConfirmation.calls))).scalars().all()
            )
            posted = (
                await session.execute(
                    select(func.count())
                    .select_from(LedgerTransfer)
                    .where(LedgerTransfer.kind == "post")
                )
            ).scalar_one()
            assert calls == [1]
            assert posted == 1
            assert (await verify(session)).ok
        balances = (await env.client.get("/api/v2/company/balances")).json()["Balances"]
        assert balances[0]["Posted"] == 1234.56


async def _debit_race(env: Isolated, *, shard_count: int) -> None:
    factory = env.app.state.session_factory
    async with unit_of_work(factory) as session:
        source = await ledger.account(
            session,
            company_id=env.company_id,
            code="race",
            owner_type="test",
            owner_id="src",
            currency="USD",
            shard_count=shard_count,
        )
        sink = await ledger.account(
            session,
            company_id=env.company_id,
            code="race",
            owner_type="test",
            owner_id="sink",
            currency="USD",
            allow_negative=True,
        )
        await ledger.post_transfer(
            session,
            company_id=env.company_id,
            legs=[Leg(sink.id, -100), Leg(source.id, 100)],
            code="race.fund",
        )

    async def debit() -> bool:
        try:
            async with unit_of_work(factory) as session:
                await ledger.post_transfer(
                    session,
                    company_id=env.company_id,
                    legs=[Leg(source.id, -10), Leg(sink.id, 10)],
                    code="race.debit",
                )
            return True
        except ledger.InsufficientFunds:
            return False

    results = await asyncio.gather(*(debit() for _ in range(64)))
    assert sum(results) == 10
    async with factory() as session:
        balance = await ledger.balance(session, company_id=env.company_id, account_id=source.id)
        assert balance.available == 0
        report = await verify(session)
        assert report.ok, report.summary()


async def test_64_concurrent_debits_of_10_from_100_let_exactly_10_through() -> None:
    async with isolated("conc", database_pool_size=40) as env:
        await _debit_race(env, shard_count=1)


async def test_64_concurrent_debits_on_a_sharded_hot_account_let_exactly_10_through() -> None:
    async with isolated("conc", database_pool_size=40) as env:
        await _debit_race(env, shard_count=8)


async def test_two_workers_at_once_deliver_each_event_once() -> None:
    receiver = Receiver(delay=0.05)
    await receiver.start()
    try:
        async with isolated("conc") as env:
            await env.client.put("/api/v2/company/configuration", json={"WebhookUrl": receiver.url})
            for _ in range(30):
                await env.client.post("/api/v2/webhooks/test")
            workers = [
                webhook_worker(env.app.state.settings, env.app.state.session_factory)
                for _ in range(2)
            ]
            for w in workers:
                w.batch_size = 5
            async with workers[0].http_client() as client:
                for _ in range(20):
                    sent = await asyncio.gather(*(w.run_once(client) for w in workers))
                    if sum(sent) == 0:
                        break
            ids = [r.headers["x-service-webhook-id"] for r in receiver.received]
            assert len(ids) == 30
            assert len(set(ids)) == 30
    finally:
        await receiver.stop()


async def test_parallel_settings_of_one_fault_leave_one_fault_armed() -> None:
    async with isolated("conc", database_pool_size=30, run_background_jobs=False) as env:
        responses = await asyncio.gather(
            *(
                env.client.put(
                    "/api/v2/sandbox/faults",
                    json={
                        "Provider": "cardprov",
                        "Operation": "load",
                        "Mode": "error",
                        "Count": count,
                    },
                )
                for count in range(1, 17)
            )
        )
        assert [r.status_code for r in responses] == [200] * 16, [r.text for r in responses]
        armed = (await env.client.get("/api/v2/sandbox/faults")).json()["Faults"]
        assert len(armed) == 1
        assert armed[0]["Remaining"] in range(1, 17)
