"""Accounts the sandbox card and switch providers open for cardholders (their own state)."""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict
from datetime import datetime

from sqlalchemy import BigInteger, String, Text, UniqueConstraint, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId
from finplat.db.dialect import insert_ignoring_conflicts
from finplat.db.unit_of_work import unit_of_work
from finplat.kit.clock import utcnow
from finplat.providers.cards.port import ACCOUNT_REVIEWED, Cardholder, HolderAccount
from finplat.providers.errors import ProviderRejected
from finplat.providers.sandbox.faults import FaultMode
from finplat.providers.sandbox.simulator import Simulator

ACTIVE = "ACTIVE"
PENDING = "PENDING"
REJECTED = "REJECTED"


class SandboxHolderAccount(Base):
    __tablename__ = "sandbox_holder_accounts"
    __table_args__ = (UniqueConstraint("provider", "company_id", "reference"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    provider: Mapped[str] = mapped_column(String(16))
    company_id: Mapped[int] = mapped_column(BigInteger)
    reference: Mapped[str] = mapped_column(String(64))
    account_id: Mapped[str] = mapped_column(String(64), unique=True)
    status: Mapped[str] = mapped_column(String(16))
    holder: Mapped[str] = mapped_column(Text)
    # The provider's copy of the cardholder's SSN, as forwarded to it.
    ssn: Mapped[str | None] = mapped_column(String(16), default=None)
    calls: Mapped[int] = mapped_column(BigInteger, default=1)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SandboxHolderAccounts:
    """Opening accounts idempotently by reference, with faults and reviews."""

    def __init__(
        self, factory: async_sessionmaker[AsyncSession], *, provider: str, latency_ms: int
    ) -> None:
        self.factory = factory
        self.provider = provider
        self.sim = Simulator(factory, provider=provider, latency_ms=latency_ms)

    async def open(self, operation: str, *, company_id: int, holder: Cardholder) -> HolderAccount:
        mode = await self.sim.enter(company_id, operation)
        details = {k: v for k, v in asdict(holder).items() if k != "ssn"}
        async with unit_of_work(self.factory) as session:
            # One account per reference even when requests race (see identity's applicants).
            inserted = (
                await session.execute(
                    insert_ignoring_conflicts(session, SandboxHolderAccount)
                    .values(
                        provider=self.provider,
                        company_id=company_id,
                        reference=holder.reference,
                        account_id=f"{self.provider}_acct_{uuid.uuid4().hex[:20]}",
                        status=PENDING if mode is FaultMode.PENDING else ACTIVE,
                        holder=json.dumps(details, default=str),
                        ssn=holder.ssn,
                        calls=1,
                    )
                    .returning(SandboxHolderAccount.id)
                )
            ).scalar_one_or_none()
            row = await self._find(session, company_id, holder.reference)
            assert row is not None
            if inserted is None:
                row.calls += 1
            account = HolderAccount(row.account_id, row.status)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return account

    async def review(self, *, company_id: int, reference: str, approved: bool) -> None:
        async with unit_of_work(self.factory) as session:
            row = await self._find(session, company_id, reference)
            if row is None:
                raise ProviderRejected(
                    "The provider has no account for this user.",
                    status=404,
                    code="PROVIDER_ACCOUNT_NOT_FOUND",
                )
            row.status = ACTIVE if approved else REJECTED
            await self.sim.emit_callback(
                session,
                company_id=company_id,
                type_=ACCOUNT_REVIEWED,
                data={"accountId": row.account_id, "reference": reference, "status": row.status},
            )

    async def _find(
        self, session: AsyncSession, company_id: int, reference: str
    ) -> SandboxHolderAccount | None:
        stmt = select(SandboxHolderAccount).where(
            SandboxHolderAccount.provider == self.provider,
            SandboxHolderAccount.company_id == company_id,
            SandboxHolderAccount.reference == reference,
        )
        return (await session.execute(stmt)).scalar_one_or_none()
