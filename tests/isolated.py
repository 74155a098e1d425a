"""A fresh, committed database per test, for tests that run background workers or servers
(they must see only their own rows and real commits)."""

from __future__ import annotations

import asyncio
import fcntl
import os
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from fastapi import FastAPI

from finplat.app import create_app
from finplat.companies import service as companies
from finplat.config import Settings
from finplat.db.unit_of_work import unit_of_work
from tests.databases import backend, migrated_database

# A test asking for a pool beyond the default's 10 (up to twice its size in connections) runs
# fifty-odd requests at once; two of them on two pytest-xdist workers at the same moment,
# beside the other workers' own, passed PostgreSQL's 100 connections and failed requests
# with "too many clients". They take turns across the run's processes instead.
LARGE_POOL: int = Settings.model_fields["database_pool_size"].default
_LARGE_POOL_LOCK = Path(tempfile.gettempdir()) / "finplat-tests-large-pools.lock"
_holding_large_pool = False


@asynccontextmanager
async def _large_pools_in_turn(pool_size: int) -> AsyncIterator[None]:
    global _holding_large_pool
    if backend() != "postgresql" or pool_size <= LARGE_POOL or _holding_large_pool:
        yield
        return
    descriptor = os.open(_LARGE_POOL_LOCK, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        await asyncio.to_thread(fcntl.flock, descriptor, fcntl.LOCK_EX)
        _holding_large_pool = True
        try:
            yield
        finally:
            _holding_large_pool = False
    finally:
        os.close(descriptor)  # and with it the lock


@dataclass
class Isolated:
    url: str
    app: FastAPI
    client: httpx.AsyncClient
    company_id: int
    api_key: str
    webhook_secret: str


@asynccontextmanager
async def isolated(
    label: str, *, mor: bool = False, **overrides: object
) -> AsyncIterator[Isolated]:
    # Setup bursts (cards ordered, funded) and parallel requests can pass the default
    # 100/second, and tests of refusals the default 20 failed authentications a minute; the
    # limits have tests of their own (tests/test_limits.py, tests/auth).
    overrides.setdefault("rate_limit", "100000/second")
    overrides.setdefault("auth_failure_limit", "100000/minute")
    pool_size = overrides.get("database_pool_size", LARGE_POOL)
    assert isinstance(pool_size, int)
    async with _large_pools_in_turn(pool_size), migrated_database(label) as url:
        settings = Settings(database_url=url, **overrides)  # type: ignore[arg-type]
        app = create_app(settings)
        async with unit_of_work(app.state.session_factory) as session:
            created = await companies.create_company(
                session, name="Isolated", sandbox=True, is_mor=mor
            )
        try:
            async with httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app),
                base_url="http://finplat.test",
                headers={"x-api-key": created.key.api_key},
                timeout=30,
            ) as client:
                yield Isolated(
                    url,
                    app,
                    client,
                    created.company.id,
                    created.key.api_key,
                    created.webhook_secret,
                )
        finally:
            await app.state.engine.dispose()
