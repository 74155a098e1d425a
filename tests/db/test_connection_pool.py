"""On PostgreSQL a process opens up to twice `database_pool_size` connections as its load needs
them and keeps each one it opened: a connection closed after a burst was opened again at the
next (a login, and every statement prepared anew)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from sqlalchemy import exc as sa_exc
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from finplat.config import Settings
from finplat.db import engine as engine_module
from tests.databases import backend

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL's pool")

POOL_SIZE = 2


@asynccontextmanager
async def pooled_engine(settings: Settings) -> AsyncIterator[AsyncEngine]:
    engine = engine_module.create_engine(
        settings.model_copy(update={"database_pool_size": POOL_SIZE})
    )
    try:
        yield engine
    finally:
        await engine.dispose()


async def hold(engine: AsyncEngine, count: int) -> list[AsyncConnection]:
    held = []
    for _ in range(count):
        connection = engine.connect()
        await connection.start()
        held.append(connection)
    return held


async def test_the_pool_keeps_every_connection_it_opened_for_a_burst(settings: Settings) -> None:
    async with pooled_engine(settings) as engine:
        burst = await hold(engine, 2 * POOL_SIZE)
        for connection in burst:
            await connection.close()
        assert engine.pool.checkedin() == 2 * POOL_SIZE  # type: ignore[attr-defined]


async def test_the_pool_opens_at_most_twice_its_size(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_module, "POSTGRES_POOL_WAIT_SECONDS", 0.2)
    async with pooled_engine(settings) as engine:
        burst = await hold(engine, 2 * POOL_SIZE)
        with pytest.raises(sa_exc.TimeoutError):
            await hold(engine, 1)
        for connection in burst:
            await connection.close()
