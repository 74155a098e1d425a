"""A request the database has no room for in time is answered 503 with Retry-After, wrote
nothing, and its retry with the same Idempotency-Key goes through once."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from decimal import Decimal

import pytest
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from finplat.db import engine as engine_module
from finplat.db.busy import database_busy
from tests.cards.funding.steps import active_card, card_balance, topup
from tests.databases import backend
from tests.isolated import isolated


@pytest.fixture
def short_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_module, "SQLITE_BUSY_SECONDS", 0.5)
    monkeypatch.setattr(engine_module, "POSTGRES_POOL_WAIT_SECONDS", 0.5)


@asynccontextmanager
async def every_connection_held(engine: AsyncEngine) -> AsyncIterator[None]:
    """Check out connections until the pool has none left to give."""
    held: list[AsyncConnection] = []
    try:
        for _ in range(50):
            connection = engine.connect()
            try:
                await connection.start()
            except sa_exc.TimeoutError:
                break
            held.append(connection)
        else:
            pytest.fail("the pool never ran out of connections")
        yield
    finally:
        for connection in held:
            await connection.close()


def assert_busy(response_status: int, body: dict[str, object], retry_after: str | None) -> None:
    assert response_status == 503
    assert body["Code"] == "SERVICE_UNAVAILABLE"
    assert "retry" in str(body["Message"]).lower()
    assert retry_after == "1"


@pytest.mark.usefixtures("short_waits")
async def test_a_request_waiting_too_long_for_a_connection_is_answered_503_and_writes_nothing() -> (
    None
):
    async with isolated("busypool", database_pool_size=1, topup_batch_runners=0) as env:
        card = await active_card(env.client)
        async with every_connection_held(env.app.state.engine):
            response = await topup(env.client, card, 10, key="busy-pool-1")
        assert_busy(response.status_code, response.json(), response.headers.get("retry-after"))
        assert await card_balance(env.client, card) == Decimal(0)


@pytest.mark.usefixtures("short_waits")
async def test_the_retry_of_a_busy_request_with_its_key_goes_through_once() -> None:
    async with isolated("busyretry", database_pool_size=1, topup_batch_runners=0) as env:
        card = await active_card(env.client)
        async with every_connection_held(env.app.state.engine):
            busy = await topup(env.client, card, 10, key="busy-retry-1")
        assert busy.status_code == 503
        first = await topup(env.client, card, 10, key="busy-retry-1")
        again = await topup(env.client, card, 10, key="busy-retry-1")
        assert first.status_code == 200, first.text
        assert again.status_code == 200
        assert again.headers.get("idempotent-replayed") == "true"
        fee = Decimal(str(first.json()["Fee"]))
        assert await card_balance(env.client, card) == Decimal(10) - fee


@pytest.mark.skipif(backend() != "sqlite", reason="SQLite's write lock")
@pytest.mark.usefixtures("short_waits")
async def test_another_process_holding_the_sqlite_write_lock_past_the_busy_timeout_is_503() -> None:
    async with isolated("busylock", topup_batch_runners=0) as env:
        card = await active_card(env.client)
        other = sqlite3.connect(make_url(env.url).database or "", isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            response = await topup(env.client, card, 10, key="busy-lock-1")
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert_busy(response.status_code, response.json(), response.headers.get("retry-after"))
        assert await card_balance(env.client, card) == Decimal(0)


async def test_parallel_writers_all_go_through_in_turn() -> None:
    """On SQLite the process's transactions queue for its one connection: none is refused."""
    async with isolated("busyqueue", topup_batch_runners=0) as env:
        card = await active_card(env.client)
        responses = await asyncio.gather(
            *(topup(env.client, card, 10, key=f"busy-queue-{i}") for i in range(24))
        )
        assert [r.status_code for r in responses] == [200] * 24
        fees = sum(Decimal(str(r.json()["Fee"])) for r in responses)
        assert await card_balance(env.client, card) == Decimal(240) - fees


@pytest.mark.skipif(backend() != "sqlite", reason="SQLite's write lock")
async def test_waiting_for_another_processs_sqlite_write_lock_leaves_the_event_loop_free() -> None:
    async with isolated("busywait", topup_batch_runners=0) as env:
        card = await active_card(env.client)
        other = sqlite3.connect(make_url(env.url).database or "", isolation_level=None)
        gaps: list[float] = []

        async def tick() -> None:
            last = time.monotonic()
            for _ in range(40):
                await asyncio.sleep(0.01)
                now = time.monotonic()
                gaps.append(now - last)
                last = now

        try:
            other.execute("BEGIN IMMEDIATE")
            waiting = asyncio.create_task(topup(env.client, card, 10, key="busy-wait-1"))
            await tick()
            assert not waiting.done()
        finally:
            other.execute("ROLLBACK")
            other.close()
        response = await waiting
        assert response.status_code == 200, response.text
        assert max(gaps) < 0.25


class _DriverError(Exception):
    def __init__(self, sqlstate: str) -> None:
        super().__init__(f"error {sqlstate}")
        self.sqlstate = sqlstate


def test_postgresql_refusing_a_connection_for_too_many_clients_counts_as_busy() -> None:
    assert database_busy(sa_exc.DBAPIError("connect", None, _DriverError("53300")))


def test_any_other_database_error_is_not_busy() -> None:
    assert not database_busy(sa_exc.IntegrityError("INSERT", None, _DriverError("23505")))
    assert not database_busy(sa_exc.OperationalError("SELECT", None, _DriverError("57014")))
