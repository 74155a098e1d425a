"""A provider is never called inside the request's transaction: the sandbox checks it."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db import request_session
from finplat.providers.simulator import Simulator, TransactionHeldAcrossProviderCall
from tests.conftest import Tenant


async def test_a_sandbox_call_inside_the_requests_open_transaction_is_refused(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    simulator = Simulator(session_factory, provider="bankprov")
    async with session_factory() as session:
        await session.execute(select(1))
        with request_session.serving(session), pytest.raises(TransactionHeldAcrossProviderCall):
            await simulator.enter(tenant.company_id, "execute_trade")


async def test_a_sandbox_call_after_the_request_committed_goes_ahead(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    simulator = Simulator(session_factory, provider="bankprov")
    async with session_factory() as session:
        await session.execute(select(1))
        await session.commit()
        with request_session.serving(session):
            assert await simulator.enter(tenant.company_id, "execute_trade") is None


async def test_a_sandbox_call_outside_any_request_goes_ahead(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    simulator = Simulator(session_factory, provider="bankprov")
    assert await simulator.enter(tenant.company_id, "execute_trade") is None
