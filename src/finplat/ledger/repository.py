"""All ledger SQL. Account reads are scoped to the caller's company; balance rows are reached
only through accounts already checked to be the company's."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.db.dialect import for_update, insert_ignoring_conflicts
from finplat.ledger.core import Delta, Entry, Layer, TransferStatus
from finplat.ledger.models import LedgerAccount, LedgerBalance, LedgerEntry, LedgerTransfer


async def find_account(
    session: AsyncSession,
    *,
    company_id: int,
    code: str,
    owner_type: str,
    owner_id: str,
    currency: str,
) -> LedgerAccount | None:
    stmt = select(LedgerAccount).where(
        LedgerAccount.company_id == company_id,
        LedgerAccount.code == code,
        LedgerAccount.owner_type == owner_type,
        LedgerAccount.owner_id == owner_id,
        LedgerAccount.currency == currency,
    )
    return (await session.execute(stmt)).scalar_one_or_none()


async def insert_account(
    session: AsyncSession,
    *,
    company_id: int,
    code: str,
    owner_type: str,
    owner_id: str,
    currency: str,
    allow_negative: bool,
    shard_count: int,
    now: datetime,
) -> None:
    """Create the account and its balance shards unless it already exists (race-safe)."""
    stmt = insert_ignoring_conflicts(session, LedgerAccount).values(
        company_id=company_id,
        code=code,
        owner_type=owner_type,
        owner_id=owner_id,
        currency=currency,
        allow_negative=allow_negative,
        shard_count=shard_count,
        created_at=now,
    )
    result = await session.execute(stmt.returning(LedgerAccount.id))
    account_id = result.scalar_one_or_none()
    if account_id is None:
        return
    floor = None if allow_negative else 0
    await session.execute(
        insert(LedgerBalance),
        [
            {
                "account_id": account_id,
                "shard": shard,
                "posted": 0,
                "pending_debits": 0,
                "pending_credits": 0,
                "floor": floor,
            }
            for shard in range(shard_count)
        ],
    )


async def accounts_by_id(
    session: AsyncSession, *, company_id: int, account_ids: Iterable[int]
) -> dict[int, LedgerAccount]:
    ids = sorted(set(account_ids))
    stmt = select(LedgerAccount).where(
        LedgerAccount.company_id == company_id, LedgerAccount.id.in_(ids)
    )
    return {a.id: a for a in (await session.execute(stmt)).scalars()}


async def accounts_of_company(
    session: AsyncSession, *, company_id: int, code: str
) -> list[LedgerAccount]:
    stmt = (
        select(LedgerAccount)
        .where(LedgerAccount.company_id == company_id, LedgerAccount.code == code)
        .order_by(LedgerAccount.currency)
    )
    return list((await session.execute(stmt)).scalars())


async def apply_delta(
    session: AsyncSession, *, account_id: int, shard: int, delta: Delta, guarded: bool
) -> bool:
    """Add `delta` to one balance shard. When `guarded`, only if the shard's available
    balance stays at or above its floor; returns whether the row was changed.

    One conditional UPDATE: the check and the write are atomic under the row lock, so two
    concurrent debits can never both pass on the same funds.
    """
    stmt = update(LedgerBalance).where(
        LedgerBalance.account_id == account_id, LedgerBalance.shard == shard
    )
    if guarded:
        stmt = stmt.where(
            or_(
                LedgerBalance.floor.is_(None),
                LedgerBalance.posted - LedgerBalance.pending_debits + delta.available
                >= LedgerBalance.floor,
            )
        )
    stmt = stmt.values(
        posted=LedgerBalance.posted + delta.posted,
        pending_debits=LedgerBalance.pending_debits + delta.pending_debits,
        pending_credits=LedgerBalance.pending_credits + delta.pending_credits,
    )
    result = await session.execute(stmt, execution_options={"synchronize_session": False})
    return int(result.rowcount) == 1  # type: ignore[attr-defined]


async def available_by_shard(session: AsyncSession, *, account_id: int) -> dict[int, int]:
    """Each shard's available balance (posted - pending debits), read without a lock: a hint
    for choosing a shard, never a check (the conditional UPDATE is the check)."""
    stmt = select(LedgerBalance.shard, LedgerBalance.posted - LedgerBalance.pending_debits).where(
        LedgerBalance.account_id == account_id
    )
    return {int(shard): int(held) for shard, held in (await session.execute(stmt)).all()}


async def lock_shards(session: AsyncSession, *, account_id: int) -> list[LedgerBalance]:
    """Lock every shard of an account in shard order (the global lock order)."""
    stmt = for_update(
        select(LedgerBalance)
        .where(LedgerBalance.account_id == account_id)
        .order_by(LedgerBalance.shard)
    )
    return list((await session.execute(stmt)).scalars())


async def insert_transfer(
    session: AsyncSession,
    *,
    company_id: int,
    kind: str,
    status: str,
    code: str,
    pending_id: int | None,
    reference: str | None,
    details: dict[str, Any],
    expires_at: datetime | None,
    now: datetime,
) -> int:
    stmt = (
        insert(LedgerTransfer)
        .values(
            company_id=company_id,
            kind=kind,
            status=status,
            code=code,
            pending_id=pending_id,
            reference=reference,
            details=details,
            expires_at=expires_at,
            created_at=now,
        )
        .returning(LedgerTransfer.id)
    )
    return int((await session.execute(stmt)).scalar_one())


async def insert_entries(
    session: AsyncSession, *, transfer_id: int, entries: Sequence[Entry], currencies: dict[int, str]
) -> None:
    await session.execute(
        insert(LedgerEntry),
        [
            {
                "transfer_id": transfer_id,
                "account_id": e.account_id,
                "shard": e.shard,
                "layer": e.layer.value,
                "amount": e.amount,
                "currency": currencies[e.account_id],
            }
            for e in entries
        ],
    )


async def get_transfer(
    session: AsyncSession, *, company_id: int, transfer_id: int
) -> LedgerTransfer | None:
    stmt = select(LedgerTransfer).where(
        LedgerTransfer.company_id == company_id, LedgerTransfer.id == transfer_id
    )
    return (await session.execute(stmt)).scalar_one_or_none()


async def entries_of(session: AsyncSession, *, transfer_id: int) -> list[Entry]:
    stmt = (
        select(LedgerEntry).where(LedgerEntry.transfer_id == transfer_id).order_by(LedgerEntry.id)
    )
    return [
        Entry(e.account_id, e.shard, Layer(e.layer), e.amount)
        for e in (await session.execute(stmt)).scalars()
    ]


async def resolve_pending(
    session: AsyncSession,
    *,
    company_id: int,
    pending_id: int,
    status: TransferStatus,
    now: datetime,
    refuse_expired: bool,
) -> bool:
    """Move a pending transfer out of PENDING; true only for the one caller that did it."""
    stmt = update(LedgerTransfer).where(
        LedgerTransfer.company_id == company_id,
        LedgerTransfer.id == pending_id,
        LedgerTransfer.status == TransferStatus.PENDING.value,
    )
    if refuse_expired:
        stmt = stmt.where(or_(LedgerTransfer.expires_at.is_(None), LedgerTransfer.expires_at > now))
    result = await session.execute(
        stmt.values(status=status.value), execution_options={"synchronize_session": False}
    )
    return int(result.rowcount) == 1  # type: ignore[attr-defined]


async def expired_pending_ids(
    session: AsyncSession, *, now: datetime, limit: int
) -> list[tuple[int, int]]:
    """(company_id, transfer_id) of pending transfers past their expiry (system scope)."""
    stmt = (
        select(LedgerTransfer.company_id, LedgerTransfer.id)
        .where(
            LedgerTransfer.status == TransferStatus.PENDING.value,
            LedgerTransfer.expires_at.is_not(None),
            LedgerTransfer.expires_at <= now,
        )
        .order_by(LedgerTransfer.expires_at)
        .limit(limit)
    )
    return [(int(c), int(t)) for c, t in (await session.execute(stmt)).all()]


async def balance_totals(session: AsyncSession, *, account_id: int) -> tuple[int, int, int]:
    """(posted, pending_debits, pending_credits) summed over the account's shards."""
    stmt = select(
        func.coalesce(func.sum(LedgerBalance.posted), 0),
        func.coalesce(func.sum(LedgerBalance.pending_debits), 0),
        func.coalesce(func.sum(LedgerBalance.pending_credits), 0),
    ).where(LedgerBalance.account_id == account_id)
    posted, pending_debits, pending_credits = (await session.execute(stmt)).one()
    return int(posted), int(pending_debits), int(pending_credits)


async def balance_totals_many(
    session: AsyncSession, *, account_ids: Sequence[int]
) -> dict[int, tuple[int, int, int]]:
    stmt = (
        select(
            LedgerBalance.account_id,
            func.sum(LedgerBalance.posted),
            func.sum(LedgerBalance.pending_debits),
            func.sum(LedgerBalance.pending_credits),
        )
        .where(LedgerBalance.account_id.in_(list(account_ids)))
        .group_by(LedgerBalance.account_id)
    )
    return {int(a): (int(p), int(d), int(c)) for a, p, d, c in (await session.execute(stmt)).all()}
