"""Fixtures of the voucher tests: a platform operator's client."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.auth import operator_keys


@pytest.fixture
async def operator(
    app: FastAPI, session_factory: async_sessionmaker[AsyncSession]
) -> AsyncIterator[httpx.AsyncClient]:
    """A client authenticated with a platform operator key."""
    async with session_factory() as session:
        issued = await operator_keys.issue(session)
        await session.commit()
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url="http://finplat.test",
        headers={"x-api-key": issued.api_key},
    ) as client:
        yield client
