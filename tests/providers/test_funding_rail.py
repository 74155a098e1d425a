"""The sandbox funding rail: one confirmation per key, however often it is asked."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.providers.errors import ProviderRejected
from finplat.providers.funding.port import FundingConfirmation
from finplat.providers.funding.sandbox.adapter import SandboxFundingRail
from finplat.providers.funding.sandbox.models import SandboxFundingConfirmation
from tests.conftest import Tenant


async def test_a_repeated_confirmation_answers_the_first_and_is_counted(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    rail = SandboxFundingRail(session_factory)

    async def confirm(key: str) -> FundingConfirmation:
        return await rail.confirm_incoming_funds(
            idempotency_key=key, company_id=tenant.company_id, currency="USD", amount_minor=5_000
        )

    first, again, other = await confirm("fund-1"), await confirm("fund-1"), await confirm("fund-2")
    assert first == again != other
    async with session_factory() as session:
        rows = (
            await session.execute(
                select(SandboxFundingConfirmation.idempotency_key, SandboxFundingConfirmation.calls)
                .where(SandboxFundingConfirmation.company_id == tenant.company_id)
                .order_by(SandboxFundingConfirmation.idempotency_key)
            )
        ).all()
    assert [tuple(row) for row in rows] == [("fund-1", 2), ("fund-2", 1)]


async def test_a_key_confirmed_for_other_terms_is_refused(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    rail = SandboxFundingRail(session_factory)
    await rail.confirm_incoming_funds(
        idempotency_key="fund-3", company_id=tenant.company_id, currency="USD", amount_minor=100
    )
    with pytest.raises(ProviderRejected) as refused:
        await rail.confirm_incoming_funds(
            idempotency_key="fund-3", company_id=tenant.company_id, currency="USD", amount_minor=200
        )
    assert refused.value.code == "PROVIDER_IDEMPOTENCY_MISMATCH"
