"""Sandbox fault injection: make the next `Count` calls of one provider operation misbehave.

Faults belong to the company that set them (one partner's experiments never disturb
another's) and are used up call by call, in the provider's own transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import cast

from sqlalchemy import (
    BigInteger,
    Integer,
    String,
    Table,
    UniqueConstraint,
    bindparam,
    delete,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db import driver_statements, prepared
from finplat.db.base import Base, BigIntId
from finplat.db.dialect import upsert
from finplat.db.unit_of_work import unit_of_work
from finplat.kit.clock import utcnow


class FaultMode(StrEnum):
    ERROR = "error"  # the provider refuses: a logical 4xx with its status and field errors
    TIMEOUT = "timeout"  # the provider does the work but the answer never arrives
    TRANSIENT = "transient"  # a technical failure before any work; retryable
    PENDING = "pending"  # the provider accepts but the outcome is decided later


class SandboxFault(Base):
    __tablename__ = "sandbox_faults"
    __table_args__ = (UniqueConstraint("company_id", "provider", "operation"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    provider: Mapped[str] = mapped_column(String(16))
    operation: Mapped[str] = mapped_column(String(64))
    mode: Mapped[str] = mapped_column(String(16))
    remaining: Mapped[int] = mapped_column(Integer)
    http_status: Mapped[int | None] = mapped_column(Integer, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


@dataclass(frozen=True)
class Fault:
    mode: FaultMode
    http_status: int | None


async def set_fault(
    session: AsyncSession,
    *,
    company_id: int,
    provider: str,
    operation: str,
    mode: FaultMode,
    count: int,
    http_status: int | None = None,
) -> SandboxFault:
    """Replace any fault on the same operation with this one (parallel requests included)."""
    stmt = upsert(
        session,
        SandboxFault,
        keys=["company_id", "provider", "operation"],
        values={
            "company_id": company_id,
            "provider": provider,
            "operation": operation,
            "mode": mode.value,
            "remaining": count,
            "http_status": http_status,
            "created_at": utcnow(),
        },
    )
    fault: SandboxFault = (
        await session.execute(
            stmt.returning(SandboxFault), execution_options={"populate_existing": True}
        )
    ).scalar_one()
    return fault


async def clear_faults(
    session: AsyncSession,
    *,
    company_id: int,
    provider: str | None = None,
    operation: str | None = None,
) -> int:
    stmt = delete(SandboxFault).where(SandboxFault.company_id == company_id)
    if provider is not None:
        stmt = stmt.where(SandboxFault.provider == provider)
    if operation is not None:
        stmt = stmt.where(SandboxFault.operation == operation)
    result = await session.execute(stmt)
    return int(getattr(result, "rowcount", 0) or 0)


_FAULTS = cast(Table, SandboxFault.__table__)
# Prebuilt: every sandbox provider call runs it (the benchmark's hot path included).
_TAKE = (
    update(_FAULTS)
    .where(
        _FAULTS.c.company_id == bindparam("f_company_id"),
        _FAULTS.c.provider == bindparam("f_provider"),
        _FAULTS.c.operation == bindparam("f_operation"),
        _FAULTS.c.remaining > 0,
    )
    .values(remaining=_FAULTS.c.remaining - 1)
    .returning(_FAULTS.c.mode, _FAULTS.c.http_status)
)

_TAKE_SQL = (
    "UPDATE sandbox_faults SET remaining = remaining - 1"
    " WHERE company_id = $1 AND provider = $2 AND operation = $3 AND remaining > 0"
    " RETURNING mode, http_status"
)


async def take(
    factory: async_sessionmaker[AsyncSession], *, company_id: int, provider: str, operation: str
) -> Fault | None:
    """Use up one call of the fault set on this operation, if any (one atomic UPDATE)."""
    if prepared.serves(factory):
        # On PostgreSQL in autocommit on a pooled driver connection: a third of the cost of
        # a session's transaction around the one statement.
        async with prepared.connection(factory) as pg:
            rows = await prepared.fetch(pg, _TAKE_SQL, company_id, provider, operation)
        return Fault(FaultMode(rows[0][0]), rows[0][1]) if rows else None
    async with unit_of_work(factory) as session:
        connection = await driver_statements.connection_of(session)
        row = (
            await connection.execute(
                _TAKE,
                {"f_company_id": company_id, "f_provider": provider, "f_operation": operation},
            )
        ).one_or_none()
    if row is None:
        return None
    return Fault(FaultMode(row[0]), row[1])


async def list_faults(session: AsyncSession, *, company_id: int) -> list[SandboxFault]:
    stmt = (
        select(SandboxFault)
        .where(SandboxFault.company_id == company_id, SandboxFault.remaining > 0)
        .order_by(SandboxFault.id)
    )
    return list((await session.execute(stmt)).scalars())
