"""Card analytics for the MOR merchant (issue 37, item 4).

Rules: over the company's own card transactions only; a purchase spends what cleared less
what was refunded, and only cleared purchases count (a hold is not spend yet, a decline or
an expiry never was); sums are made by the database in minor units, per currency (amounts of
two currencies are never added); `from` inclusive and `to` exclusive on when the purchase was
first seen; periods are UTC days, ISO weeks (from Monday) and calendar months, and only
periods with a purchase are answered.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.mor.analytics import repository
from finplat.mor.analytics.repository import MorSpendPeriod, Spend, Window


async def by_period(
    session: AsyncSession, *, company_id: int, period: MorSpendPeriod, window: Window
) -> list[Spend]:
    return await repository.by_period(session, company_id=company_id, period=period, window=window)


async def by_category(
    session: AsyncSession, *, company_id: int, window: Window, offset: int, limit: int
) -> list[Spend]:
    return await repository.by_category(
        session, company_id=company_id, window=window, offset=offset, limit=limit
    )


async def by_cardholder(
    session: AsyncSession, *, company_id: int, window: Window, offset: int, limit: int
) -> list[Spend]:
    return await repository.by_cardholder(
        session, company_id=company_id, window=window, offset=offset, limit=limit
    )
