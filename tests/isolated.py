"""A fresh, committed database per test, for tests that run background workers or servers
(they must see only their own rows and real commits)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import httpx
from fastapi import FastAPI

from finplat.app import create_app
from finplat.companies import service as companies
from finplat.config import Settings
from finplat.db.unit_of_work import unit_of_work
from tests.databases import migrated_database


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
    async with migrated_database(label) as url:
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
