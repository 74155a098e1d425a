"""Sandbox funding rail: behaves like a bank confirming an incoming wire.

It keeps its own state in the database (in its own transaction, as an outside system would),
answers after a configurable latency, and deduplicates by idempotency key: a repeated call
returns the first confirmation and changes nothing but the call counter.
"""

from __future__ import annotations

import uuid
from typing import Any, cast

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db.unit_of_work import unit_of_work
from finplat.kit.clock import utcnow
from finplat.providers.errors import ProviderRejected
from finplat.providers.funding.port import FundingConfirmation
from finplat.providers.funding.sandbox.models import SandboxFundingConfirmation
from finplat.providers.names import ExternalProvider
from finplat.providers.sandbox.faults import FaultMode
from finplat.providers.sandbox.simulator import Simulator

OPERATIONS = ("confirm_incoming_funds",)
_CONFIRMATIONS = cast(Table, SandboxFundingConfirmation.__table__)


def _confirmation(insert: Any) -> Any:
    """A confirmation written once per key, a repeated call counted on the first one; the
    row as stored either way (one statement)."""
    return insert.on_conflict_do_update(
        index_elements=[_CONFIRMATIONS.c.idempotency_key],
        set_={"calls": _CONFIRMATIONS.c.calls + 1},
    ).returning(*_CONFIRMATIONS.c)


# Built once per database, its values bound on each call.
_CONFIRM = {
    "postgresql": _confirmation(postgresql.insert(_CONFIRMATIONS)),
    "sqlite": _confirmation(sqlite.insert(_CONFIRMATIONS)),
}


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
            dialect = session.get_bind().dialect.name
            found = await session.execute(
                _CONFIRM[dialect],
                {
                    "idempotency_key": idempotency_key,
                    "company_id": company_id,
                    "currency": currency,
                    "amount_minor": amount_minor,
                    "reference": f"sbx_fund_{uuid.uuid4().hex[:24]}",
                    "calls": 1,
                    "created_at": utcnow(),
                },
            )
            row = found.one()
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
