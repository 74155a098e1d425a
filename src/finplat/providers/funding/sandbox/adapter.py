"""Sandbox funding rail: behaves like a bank confirming an incoming wire.

It keeps its own state in the database (in its own transaction, as an outside system would),
answers after a configurable latency, and deduplicates by idempotency key: a repeated call
returns the first confirmation and changes nothing but the call counter.
"""

from __future__ import annotations

import uuid

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db.dialect import insert_ignoring_conflicts
from finplat.db.unit_of_work import unit_of_work
from finplat.kit.clock import utcnow
from finplat.providers.errors import ProviderRejected
from finplat.providers.funding.port import FundingConfirmation
from finplat.providers.funding.sandbox.models import SandboxFundingConfirmation
from finplat.providers.names import ExternalProvider
from finplat.providers.sandbox.faults import FaultMode
from finplat.providers.sandbox.simulator import Simulator

OPERATIONS = ("confirm_incoming_funds",)


class SandboxFundingRail:
    name = ExternalProvider.FUNDING.value

    def __init__(self, factory: async_sessionmaker[AsyncSession], *, latency_ms: int = 0) -> None:
        self.factory = factory
        self.sim = Simulator(factory, provider=self.name, latency_ms=latency_ms)

    async def confirm_incoming_funds(
        self, *, idempotency_key: str, company_id: int, currency: str, amount_minor: int
    ) -> FundingConfirmation:
        mode = await self.sim.enter(company_id, "confirm_incoming_funds")
        async with unit_of_work(self.factory) as session:
            inserted = await session.execute(
                insert_ignoring_conflicts(session, SandboxFundingConfirmation)
                .values(
                    idempotency_key=idempotency_key,
                    company_id=company_id,
                    currency=currency,
                    amount_minor=amount_minor,
                    reference=f"sbx_fund_{uuid.uuid4().hex[:24]}",
                    calls=1,
                    created_at=utcnow(),
                )
                .returning(SandboxFundingConfirmation.id)
            )
            if inserted.scalar_one_or_none() is None:
                await session.execute(
                    update(SandboxFundingConfirmation)
                    .where(SandboxFundingConfirmation.idempotency_key == idempotency_key)
                    .values(calls=SandboxFundingConfirmation.calls + 1)
                )
            row = (
                await session.execute(
                    select(SandboxFundingConfirmation).where(
                        SandboxFundingConfirmation.idempotency_key == idempotency_key
                    )
                )
            ).scalar_one()
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        if (row.company_id, row.currency, row.amount_minor) != (
            company_id,
            currency,
            amount_minor,
        ):
            raise ProviderRejected(
                "The provider already confirmed a different transfer under this key.",
                code="PROVIDER_IDEMPOTENCY_MISMATCH",
            )
        return FundingConfirmation(provider_reference=row.reference)
