"""The merchant's statement in one statement: every business record that moved its wallet
(company fundings, card top-ups and unloads, fundings between parent and child companies) and
its cards' purchases and fees, as one list of rows ordered newest first.

Each source is read by the company (the tenant guard adds the same filter again); the ledger's
company fundings through their partial index (`ix_ledger_transfers_company_funding`), the
journal having no company index of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, String, and_, case, cast, func, literal, null, select, union_all
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards.funding.models import CardFunding
from finplat.cards.models import Card
from finplat.cards.transactions.models import CardTransaction
from finplat.ledger.core import Layer, TransferKind
from finplat.ledger.models import LedgerAccount, LedgerEntry, LedgerTransfer
from finplat.ledger.service import CompanyAccount
from finplat.mor.children.models import MorChildFunding
from finplat.mor.statement.kinds import MorTransactionType

COMPANY_FUNDING_CODE = "company.funding"


@dataclass(frozen=True)
class StatementFilter:
    currency: str | None
    types: list[MorTransactionType]
    since: datetime | None  # inclusive
    until: datetime | None  # exclusive
    card_id: int | None
    user_id: int | None


@dataclass(frozen=True)
class StatementRow:
    type: MorTransactionType
    reference_id: int
    currency: str
    amount_minor: int
    fee_minor: int
    status: str
    card_id: int | None
    user_id: int | None
    created_at: datetime


def _company_fundings(company_id: int) -> Any:
    masters = select(LedgerAccount.id).where(
        LedgerAccount.company_id == company_id,
        LedgerAccount.code == CompanyAccount.MASTER.value,
    )
    return (
        select(
            literal(MorTransactionType.COMPANY_FUNDING.value, String).label("type"),
            LedgerTransfer.id.label("reference_id"),
            LedgerEntry.currency.label("currency"),
            func.sum(LedgerEntry.amount).label("amount_minor"),
            literal(0, BigInteger).label("fee_minor"),
            literal("COMPLETED", String).label("status"),
            cast(null(), BigInteger).label("card_id"),
            cast(null(), BigInteger).label("user_id"),
            LedgerTransfer.created_at.label("created_at"),
        )
        .join(LedgerEntry, LedgerEntry.transfer_id == LedgerTransfer.id)
        .where(
            LedgerTransfer.company_id == company_id,
            LedgerTransfer.code == COMPANY_FUNDING_CODE,
            LedgerTransfer.kind.in_([TransferKind.POST.value, TransferKind.SINGLE.value]),
            LedgerEntry.layer == Layer.POSTED.value,
            LedgerEntry.amount > 0,
            LedgerEntry.account_id.in_(masters),
        )
        .group_by(LedgerTransfer.id, LedgerEntry.currency, LedgerTransfer.created_at)
    )


def _card_fundings(company_id: int) -> Any:
    kind = case(
        (CardFunding.kind.in_(["TOPUP", "AUTO_TOPUP"]), MorTransactionType.CARD_TOPUP.value),
        (CardFunding.kind == "UNLOAD", MorTransactionType.CARD_UNLOAD.value),
        else_=MorTransactionType.CARD_DECLINE_FEE.value,
    )
    # What the wallet moved: a top-up takes its whole amount (the fee included), an unload
    # brings back its amount less the fee; a decline fee is the card's, its amount the fee.
    amount = case(
        (CardFunding.kind == "UNLOAD", CardFunding.amount_minor - CardFunding.fee_minor),
        else_=CardFunding.amount_minor,
    )
    return (
        select(
            kind.label("type"),
            CardFunding.id.label("reference_id"),
            CardFunding.currency.label("currency"),
            amount.label("amount_minor"),
            CardFunding.fee_minor.label("fee_minor"),
            CardFunding.status.label("status"),
            CardFunding.card_id.label("card_id"),
            Card.user_id.label("user_id"),
            CardFunding.created_at.label("created_at"),
        )
        .join(Card, and_(Card.id == CardFunding.card_id, Card.company_id == company_id))
        .where(CardFunding.company_id == company_id)
    )


def _child_fundings(company_id: int) -> Any:
    """Both sides: what the company sent to its children and what it received as a child."""
    sent = MorChildFunding.parent_company_id == company_id
    return select(
        case(
            (sent, MorTransactionType.CHILD_FUNDING.value),
            else_=MorTransactionType.PARENT_FUNDING.value,
        ).label("type"),
        MorChildFunding.id.label("reference_id"),
        MorChildFunding.currency.label("currency"),
        MorChildFunding.amount_minor.label("amount_minor"),
        literal(0, BigInteger).label("fee_minor"),
        literal("COMPLETED", String).label("status"),
        cast(null(), BigInteger).label("card_id"),
        cast(null(), BigInteger).label("user_id"),
        MorChildFunding.created_at.label("created_at"),
    ).where(sent | (MorChildFunding.child_company_id == company_id))


def _card_purchases(company_id: int) -> Any:
    # A cleared purchase counts what cleared less what was refunded; one not cleared (held,
    # reversed, declined, expired) what was authorized and not reversed.
    amount = case(
        (
            CardTransaction.cleared_minor > 0,
            CardTransaction.cleared_minor - CardTransaction.refunded_minor,
        ),
        else_=CardTransaction.authorized_minor
        + CardTransaction.incremented_minor
        - CardTransaction.reversed_minor,
    )
    return select(
        literal(MorTransactionType.CARD_PURCHASE.value, String).label("type"),
        CardTransaction.id.label("reference_id"),
        CardTransaction.currency.label("currency"),
        amount.label("amount_minor"),
        literal(0, BigInteger).label("fee_minor"),
        CardTransaction.status.label("status"),
        CardTransaction.card_id.label("card_id"),
        CardTransaction.user_id.label("user_id"),
        CardTransaction.created_at.label("created_at"),
    ).where(CardTransaction.company_id == company_id)


async def page(
    session: AsyncSession, *, company_id: int, where: StatementFilter, offset: int, limit: int
) -> list[StatementRow]:
    """Rows of the statement, newest first (then by type and reference, so pages are stable)."""
    rows = union_all(
        _company_fundings(company_id),
        _card_fundings(company_id),
        _child_fundings(company_id),
        _card_purchases(company_id),
    ).subquery("movements")
    stmt = select(rows)
    if where.currency is not None:
        stmt = stmt.where(rows.c.currency == where.currency)
    if where.types:
        stmt = stmt.where(rows.c.type.in_([t.value for t in where.types]))
    if where.since is not None:
        stmt = stmt.where(rows.c.created_at >= where.since)
    if where.until is not None:
        stmt = stmt.where(rows.c.created_at < where.until)
    if where.card_id is not None:
        stmt = stmt.where(rows.c.card_id == where.card_id)
    if where.user_id is not None:
        stmt = stmt.where(rows.c.user_id == where.user_id)
    stmt = (
        stmt.order_by(rows.c.created_at.desc(), rows.c.type.desc(), rows.c.reference_id.desc())
        .offset(offset)
        .limit(limit)
    )
    return [
        StatementRow(
            type=MorTransactionType(row.type),
            reference_id=int(row.reference_id),
            currency=str(row.currency),
            amount_minor=int(row.amount_minor),
            fee_minor=int(row.fee_minor),
            status=str(row.status),
            card_id=None if row.card_id is None else int(row.card_id),
            user_id=None if row.user_id is None else int(row.user_id),
            created_at=row.created_at,
        )
        for row in (await session.execute(stmt)).all()
    ]
