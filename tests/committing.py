"""An app wired to the real engine, for tests that must see real commits and rollbacks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from fastapi import FastAPI

from finplat.app import create_app
from finplat.companies import service as companies
from finplat.config import Settings
from finplat.db.unit_of_work import unit_of_work


@asynccontextmanager
async def committing_client(
    settings: Settings, app: FastAPI | None = None
) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient, int]]:
    """Yield (app, client authenticated as a new committed company, company id)."""
    app = app or create_app(settings)
    async with unit_of_work(app.state.session_factory) as session:
        created = await companies.create_company(session, name="Committed Co", sandbox=True)
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://finplat.test",
            headers={"x-api-key": created.key.api_key},
        ) as client:
            yield app, client, created.company.id
    finally:
        await app.state.engine.dispose()
