"""All SQL of card analytics: sums in minor units per currency, computed by the database over
the company's card transactions (purchases)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import Integer, String, cast, func, literal_column, select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards.transactions.models import CardTransaction
from finplat.db.dialect import is_postgresql


class MorSpendPeriod(StrEnum):
    DAY = "DAY"
    WEEK = "WEEK"  # ISO weeks: Monday to Sunday, UTC
    MONTH = "MONTH"


@dataclass(frozen=True)
class Window:
    currency: str | None
    since: datetime | None  # inclusive
    until: datetime | None  # exclusive


@dataclass(frozen=True)
class Spend:
    key: str | int | None  # the bucket's first day (YYYY-MM-DD), the MCC, the user id
    currency: str
    spent_minor: int
    purchases: int


# What a purchase spent: what cleared less what was refunded. Only cleared purchases count:
# a hold is not yet spend, and a declined or expired purchase never was.
SPENT = CardTransaction.cleared_minor - CardTransaction.refunded_minor


def _text(value: str) -> Any:
    """A constant written into the SQL itself: PostgreSQL must see the grouped expression and
    the selected one as the same text, which two bound parameters are not."""
    return literal_column("'" + value + "'")


def _bucket(session: AsyncSession, period: MorSpendPeriod) -> Any:
    """The first day of the period holding a purchase, as YYYY-MM-DD text, in UTC."""
    created = CardTransaction.created_at
    if is_postgresql(session):
        unit = {
            MorSpendPeriod.DAY: "day",
            MorSpendPeriod.WEEK: "week",
            MorSpendPeriod.MONTH: "month",
        }[period]
        utc = func.timezone(_text("UTC"), created)
        return func.to_char(func.date_trunc(_text(unit), utc), _text("YYYY-MM-DD"))
    # SQLite keeps UTC text: weekday 0 is Sunday, so Monday is (weekday + 6) % 7 days back.
    if period == MorSpendPeriod.DAY:
        return func.date(created)
    if period == MorSpendPeriod.MONTH:
        return func.strftime(_text("%Y-%m-01"), created)
    back = (cast(func.strftime(_text("%w"), created), Integer) + 6) % 7
    return func.date(created, _text("-").concat(cast(back, String)).concat(_text(" days")))


def _spend(company_id: int, key: Any, window: Window) -> Any:
    stmt = select(
        key.label("key"),
        CardTransaction.currency,
        func.sum(SPENT).label("spent"),
        func.count().label("purchases"),
    ).where(CardTransaction.company_id == company_id, CardTransaction.cleared_minor > 0)
    if window.currency is not None:
        stmt = stmt.where(CardTransaction.currency == window.currency)
    if window.since is not None:
        stmt = stmt.where(CardTransaction.created_at >= window.since)
    if window.until is not None:
        stmt = stmt.where(CardTransaction.created_at < window.until)
    return stmt.group_by(key, CardTransaction.currency)


async def _rows(session: AsyncSession, stmt: Any) -> list[Spend]:
    return [
        Spend(row.key, str(row.currency), int(row.spent), int(row.purchases))
        for row in (await session.execute(stmt)).all()
    ]


async def by_period(
    session: AsyncSession, *, company_id: int, period: MorSpendPeriod, window: Window
) -> list[Spend]:
    """Oldest bucket first; only buckets with a purchase."""
    key = _bucket(session, period)
    stmt = _spend(company_id, key, window).order_by(key, CardTransaction.currency)
    return await _rows(session, stmt)


async def by_category(
    session: AsyncSession, *, company_id: int, window: Window, offset: int, limit: int
) -> list[Spend]:
    """Most spent first."""
    key = CardTransaction.mcc
    stmt = (
        _spend(company_id, key, window)
        .order_by(func.sum(SPENT).desc(), CardTransaction.currency, key)
        .offset(offset)
        .limit(limit)
    )
    return await _rows(session, stmt)


async def by_cardholder(
    session: AsyncSession, *, company_id: int, window: Window, offset: int, limit: int
) -> list[Spend]:
    """Most spent first."""
    key = CardTransaction.user_id
    stmt = (
        _spend(company_id, key, window)
        .order_by(func.sum(SPENT).desc(), CardTransaction.currency, key)
        .offset(offset)
        .limit(limit)
    )
    return await _rows(session, stmt)
