"""Location insights: the company's merchants (its locations) ranked by the matched and
imported transactions of a period: how many were paid, by how many users, for how many
points. A transaction refunded in full no longer counts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.kit.clock import utcnow
from finplat.loyalty.models import LoyaltyMerchant
from finplat.loyalty.repository import AwardRepository, MerchantRepository

TOP = 10


class Period(StrEnum):
    DAYS_30 = "30d"
    DAYS_90 = "90d"
    YEAR = "1y"


class Metric(StrEnum):
    TRANSACTIONS = "transactions"
    USERS = "users"
    POINTS = "points"


SPANS = {
    Period.DAYS_30: timedelta(days=30),
    Period.DAYS_90: timedelta(days=90),
    Period.YEAR: timedelta(days=365),
}


@dataclass(frozen=True)
class LocationStats:
    merchant: LoyaltyMerchant
    transactions: int
    users: int
    points: int

    def value(self, metric: Metric) -> int:
        return {
            Metric.TRANSACTIONS: self.transactions,
            Metric.USERS: self.users,
            Metric.POINTS: self.points,
        }[metric]


@dataclass(frozen=True)
class Insights:
    top: list[LocationStats]
    period: Period
    metric: Metric
    generated_at: datetime


async def location_insights(
    session: AsyncSession, *, company_id: int, period: Period, metric: Metric
) -> Insights:
    now = utcnow()
    rows = await AwardRepository(session, company_id).by_location(since=now - SPANS[period])
    merchants = await MerchantRepository(session, company_id).named([r[0] for r in rows])
    stats = [LocationStats(merchants[m], t, u, p) for m, t, u, p in rows if m in merchants]
    stats.sort(key=lambda s: (-s.value(metric), s.merchant.id))
    return Insights(stats[:TOP], period, metric, now)
