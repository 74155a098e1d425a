"""`finplat ledger verify`: recompute the ledger from its entries and compare.

Checks, across every company:
1. every transfer has at least two entries and sums to zero per currency (and so does its
   posted layer);
2. every entry's currency is its account's currency;
3. every balance shard equals the sum of its entries, layer by layer;
4. no account that may not go negative has a shard, or a total, below zero available;
5. every pending transfer is resolved at most once, its resolution releases exactly what it
   reserved, and a still-pending one has no resolution;
6. conservation: the posted balances of all accounts sum to zero per currency;
7. references (the journal tables carry no foreign keys): every entry's transfer and account
   exist, and every resolution resolves an existing pending transfer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import case, func, literal, select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.ledger.core import Layer, TransferKind, TransferStatus
from finplat.ledger.models import LedgerAccount, LedgerBalance, LedgerEntry, LedgerTransfer


@dataclass
class VerificationReport:
    accounts: int = 0
    transfers: int = 0
    entries: int = 0
    problems: list[str] = field(default_factory=list)
    posted_totals: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        lines = [
            f"accounts: {self.accounts}  transfers: {self.transfers}  entries: {self.entries}",
            "posted total per currency (must be 0): "
            + (", ".join(f"{c}={t}" for c, t in sorted(self.posted_totals.items())) or "none"),
        ]
        if self.ok:
            lines.append("ledger OK: every check passed")
        else:
            lines.append(f"ledger BROKEN: {len(self.problems)} problem(s)")
            lines += [f"  - {p}" for p in self.problems[:200]]
        return "\n".join(lines)


def _layer_sum(layer: Layer, sign: int = 1) -> Any:
    return func.coalesce(
        func.sum(case((LedgerEntry.layer == layer.value, LedgerEntry.amount * sign), else_=0)), 0
    )


async def verify(session: AsyncSession) -> VerificationReport:
    report = VerificationReport()
    report.accounts = int(
        (await session.execute(select(func.count(LedgerAccount.id)))).scalar_one()
    )
    report.transfers = int(
        (await session.execute(select(func.count(LedgerTransfer.id)))).scalar_one()
    )
    report.entries = int((await session.execute(select(func.count(LedgerEntry.id)))).scalar_one())

    # 1. balanced transfers
    unbalanced = (
        select(LedgerEntry.transfer_id, LedgerEntry.currency, func.sum(LedgerEntry.amount))
        .group_by(LedgerEntry.transfer_id, LedgerEntry.currency)
        .having(func.sum(LedgerEntry.amount) != 0)
    )
    for transfer_id, currency, total in (await session.execute(unbalanced)).all():
        report.problems.append(f"transfer {transfer_id} does not balance in {currency}: {total}")
    posted_unbalanced = (
        select(LedgerEntry.transfer_id, LedgerEntry.currency, func.sum(LedgerEntry.amount))
        .where(LedgerEntry.layer == Layer.POSTED.value)
        .group_by(LedgerEntry.transfer_id, LedgerEntry.currency)
        .having(func.sum(LedgerEntry.amount) != 0)
    )
    for transfer_id, currency, total in (await session.execute(posted_unbalanced)).all():
        report.problems.append(
            f"transfer {transfer_id} posted layer does not balance in {currency}: {total}"
        )
    thin = (
        select(LedgerTransfer.id, func.count(LedgerEntry.id))
        .outerjoin(LedgerEntry, LedgerEntry.transfer_id == LedgerTransfer.id)
        .group_by(LedgerTransfer.id)
        .having(func.count(LedgerEntry.id) < 2)
    )
    for transfer_id, count in (await session.execute(thin)).all():
        report.problems.append(f"transfer {transfer_id} has {count} entries (needs 2 or more)")

    # 2. currencies
    wrong_currency = (
        select(LedgerEntry.id, LedgerEntry.currency, LedgerAccount.currency)
        .join(LedgerAccount, LedgerAccount.id == LedgerEntry.account_id)
        .where(LedgerEntry.currency != LedgerAccount.currency)
    )
    for entry_id, entry_currency, account_currency in (await session.execute(wrong_currency)).all():
        report.problems.append(
            f"entry {entry_id} is in {entry_currency} on a {account_currency} account"
        )

    # 3. stored balances = sums of entries
    sums = (
        select(
            LedgerEntry.account_id.label("account_id"),
            LedgerEntry.shard.label("shard"),
            _layer_sum(Layer.POSTED).label("posted"),
            _layer_sum(Layer.PENDING_DEBIT, -1).label("pending_debits"),
            _layer_sum(Layer.PENDING_CREDIT).label("pending_credits"),
        )
        .group_by(LedgerEntry.account_id, LedgerEntry.shard)
        .subquery()
    )
    mismatched = select(
        LedgerBalance.account_id,
        LedgerBalance.shard,
        LedgerBalance.posted,
        LedgerBalance.pending_debits,
        LedgerBalance.pending_credits,
        func.coalesce(sums.c.posted, 0),
        func.coalesce(sums.c.pending_debits, 0),
        func.coalesce(sums.c.pending_credits, 0),
    ).outerjoin(
        sums,
        (sums.c.account_id == LedgerBalance.account_id) & (sums.c.shard == LedgerBalance.shard),
    )
    for row in (await session.execute(mismatched)).all():
        account_id, shard, posted, debits, credits, e_posted, e_debits, e_credits = row
        if (posted, debits, credits) != (e_posted, e_debits, e_credits):
            report.problems.append(
                f"account {account_id} shard {shard}: stored posted/pending_debits/"
                f"pending_credits {posted}/{debits}/{credits} != entries "
                f"{e_posted}/{e_debits}/{e_credits}"
            )
    orphans = (
        select(sums.c.account_id, sums.c.shard)
        .outerjoin(
            LedgerBalance,
            (sums.c.account_id == LedgerBalance.account_id) & (sums.c.shard == LedgerBalance.shard),
        )
        .where(LedgerBalance.account_id.is_(None))
    )
    for account_id, shard in (await session.execute(orphans)).all():
        report.problems.append(f"entries on account {account_id} shard {shard} with no balance row")

    # 4. negative-balance rule
    negative = (
        select(
            LedgerAccount.id,
            func.sum(LedgerBalance.posted - LedgerBalance.pending_debits),
            func.min(LedgerBalance.posted - LedgerBalance.pending_debits),
        )
        .join(LedgerBalance, LedgerBalance.account_id == LedgerAccount.id)
        .where(LedgerAccount.allow_negative == literal(False))
        .group_by(LedgerAccount.id)
    )
    for account_id, total, lowest in (await session.execute(negative)).all():
        if total < 0 or lowest < 0:
            report.problems.append(
                f"account {account_id} may not go negative but has available {total} "
                f"(lowest shard {lowest})"
            )

    # 5. pending lifecycle
    resolution = LedgerTransfer.__table__.alias("resolution")
    lifecycle = (
        select(LedgerTransfer.id, LedgerTransfer.status, func.count(resolution.c.id))
        .outerjoin(resolution, resolution.c.pending_id == LedgerTransfer.id)
        .where(LedgerTransfer.kind == TransferKind.PENDING.value)
        .group_by(LedgerTransfer.id, LedgerTransfer.status)
    )
    for transfer_id, status, resolutions in (await session.execute(lifecycle)).all():
        expected = 0 if status == TransferStatus.PENDING.value else 1
        if resolutions != expected:
            report.problems.append(
                f"pending transfer {transfer_id} is {status} with {resolutions} resolution(s)"
            )
    # Per account, shard and layer: a debit reservation and a credit announcement of the same
    # size must not hide each other's missing release. Each non-posted entry counts for the
    # pending transfer it belongs to: its own transfer, or the one its transfer resolves (one
    # pass over the entries, however many transfers there are).
    owner = func.coalesce(LedgerTransfer.pending_id, LedgerTransfer.id).label("owner")
    reservations = (
        select(
            owner, LedgerEntry.account_id, LedgerEntry.shard, LedgerEntry.layer, LedgerEntry.amount
        )
        .join(LedgerTransfer, LedgerTransfer.id == LedgerEntry.transfer_id)
        .where(
            LedgerEntry.layer != Layer.POSTED.value,
            (LedgerTransfer.kind == TransferKind.PENDING.value)
            | LedgerTransfer.pending_id.is_not(None),
        )
        .subquery()
    )
    pending = LedgerTransfer.__table__.alias("pending")
    leftover = (
        select(
            reservations.c.owner,
            reservations.c.account_id,
            reservations.c.layer,
            func.sum(reservations.c.amount),
        )
        .join(pending, pending.c.id == reservations.c.owner)
        .where(
            pending.c.kind == TransferKind.PENDING.value,
            pending.c.status != TransferStatus.PENDING.value,
        )
        .group_by(
            reservations.c.owner,
            reservations.c.account_id,
            reservations.c.shard,
            reservations.c.layer,
        )
        .having(func.sum(reservations.c.amount) != 0)
    )
    for transfer_id, account_id, layer, remaining in (await session.execute(leftover)).all():
        report.problems.append(
            f"resolved pending transfer {transfer_id} left {remaining} in {layer} "
            f"on account {account_id}"
        )

    # 7. references
    await _check_references(session, report)

    # 6. conservation
    totals = (
        select(LedgerAccount.currency, func.sum(LedgerBalance.posted))
        .join(LedgerBalance, LedgerBalance.account_id == LedgerAccount.id)
        .group_by(LedgerAccount.currency)
    )
    for currency, total in (await session.execute(totals)).all():
        report.posted_totals[currency] = int(total)
        if total != 0:
            report.problems.append(f"posted balances in {currency} sum to {total}, not 0")
    return report


async def _check_references(session: AsyncSession, report: VerificationReport) -> None:
    """What foreign keys would guarantee, checked instead (see `LedgerTransfer`)."""
    no_transfer = (
        select(LedgerEntry.id, LedgerEntry.transfer_id)
        .outerjoin(LedgerTransfer, LedgerTransfer.id == LedgerEntry.transfer_id)
        .where(LedgerTransfer.id.is_(None))
    )
    for entry_id, transfer_id in (await session.execute(no_transfer)).all():
        report.problems.append(f"entry {entry_id} belongs to missing transfer {transfer_id}")
    no_account = (
        select(LedgerEntry.id, LedgerEntry.account_id)
        .outerjoin(LedgerAccount, LedgerAccount.id == LedgerEntry.account_id)
        .where(LedgerAccount.id.is_(None))
    )
    for entry_id, account_id in (await session.execute(no_account)).all():
        report.problems.append(f"entry {entry_id} is on missing account {account_id}")
    pending = LedgerTransfer.__table__.alias("pending")
    unresolvable = (
        select(LedgerTransfer.id, LedgerTransfer.pending_id)
        .outerjoin(pending, pending.c.id == LedgerTransfer.pending_id)
        .where(
            LedgerTransfer.pending_id.is_not(None),
            (pending.c.id.is_(None)) | (pending.c.kind != TransferKind.PENDING.value),
        )
    )
    for transfer_id, pending_id in (await session.execute(unresolvable)).all():
        report.problems.append(
            f"transfer {transfer_id} resolves {pending_id}, which is no pending transfer"
        )
