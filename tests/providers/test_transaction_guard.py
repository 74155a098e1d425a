"""A provider is never called inside a unit of work's open transaction: the sandbox checks it,
for requests and background jobs alike."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db.unit_of_work import unit_of_work
from finplat.providers.simulator import Simulator, TransactionHeldAcrossProviderCall
from tests.conftest import Tenant


async def test_a_sandbox_call_inside_an_open_transaction_is_refused(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    simulator = Simulator(session_factory, provider="bankprov")
    async with unit_of_work(session_factory) as session:
        await session.execute(select(1))
        with pytest.raises(TransactionHeldAcrossProviderCall):
            await simulator.enter(tenant.company_id, "execute_trade")


async def test_a_sandbox_call_in_a_task_started_inside_an_open_transaction_is_refused(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    simulator = Simulator(session_factory, provider="bankprov")
    async with unit_of_work(session_factory) as session:
        await session.execute(select(1))
        with pytest.raises(TransactionHeldAcrossProviderCall):
            await asyncio.gather(simulator.enter(tenant.company_id, "execute_trade"))


async def test_a_sandbox_call_after_the_commit_goes_ahead(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    simulator = Simulator(session_factory, provider="bankprov")
    async with unit_of_work(session_factory) as session:
        await session.execute(select(1))
        await session.commit()
        assert await simulator.enter(tenant.company_id, "execute_trade") is None


async def test_a_sandbox_call_after_the_unit_of_work_goes_ahead(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    simulator = Simulator(session_factory, provider="bankprov")
    async with unit_of_work(session_factory) as session:
        await session.execute(select(1))
    assert await simulator.enter(tenant.company_id, "execute_trade") is None


async def test_a_sandbox_call_outside_any_unit_of_work_goes_ahead(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    simulator = Simulator(session_factory, provider="bankprov")
    assert await simulator.enter(tenant.company_id, "execute_trade") is None
