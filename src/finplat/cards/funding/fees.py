"""Card fees: a schedule per tier (percentage + fixed for top-ups and unloads, and a decline
fee), stored in `card_fee_schedules`; a tier without a row uses `DEFAULT_SCHEDULE`.

Percentage fees are rounded **up** to the next minor unit before the net amount is computed
(`percentage_of`), so the platform never under-collects; the fee never exceeds the amount.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards.funding.models import CardFeeSchedule
from finplat.cards.funding.repository import FeeScheduleRepository
from finplat.errors import NotFound
from finplat.kit.clock import utcnow
from finplat.kit.money import percentage_of
from finplat.tiers.models import Tier
from finplat.tiers.repository import TierRepository

# Decline fees are collected for declines from this instant on (spec: States and transitions).
DECLINE_FEES_FROM = datetime(2026, 7, 1, tzinfo=UTC)


class TierNotFound(NotFound):
    code = "TIER_NOT_FOUND"
    message = "No tier with that id in this company."


@dataclass(frozen=True)
class FeeSchedule:
    topup_percent: Decimal
    topup_fixed_minor: int
    unload_percent: Decimal
    unload_fixed_minor: int
    decline_fee_minor: int
    configured: bool = False

    def topup_fee(self, amount_minor: int) -> int:
        return fee_of(amount_minor, self.topup_percent, self.topup_fixed_minor)

    def unload_fee(self, amount_minor: int) -> int:
        return fee_of(amount_minor, self.unload_percent, self.unload_fixed_minor)


DEFAULT_SCHEDULE = FeeSchedule(
    topup_percent=Decimal("1.00"),
    topup_fixed_minor=0,
    unload_percent=Decimal("0"),
    unload_fixed_minor=0,
    decline_fee_minor=0,
)


def fee_of(amount_minor: int, percent: Decimal, fixed_minor: int) -> int:
    """`percent`% of the amount rounded up to the next minor unit, plus the fixed fee; at most
    the amount itself (the net is never negative)."""
    return min(amount_minor, percentage_of(amount_minor, percent) + fixed_minor)


def decline_fee_due(schedule: FeeSchedule, at: datetime | None = None) -> int:
    """The fee a decline at `at` costs (0 before collection started or when none is set)."""
    when = at or utcnow()
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return schedule.decline_fee_minor if when >= DECLINE_FEES_FROM else 0


def _of_row(row: CardFeeSchedule) -> FeeSchedule:
    return FeeSchedule(
        topup_percent=Decimal(row.topup_fee_percent),
        topup_fixed_minor=row.topup_fixed_fee_minor,
        unload_percent=Decimal(row.unload_fee_percent),
        unload_fixed_minor=row.unload_fixed_fee_minor,
        decline_fee_minor=row.decline_fee_minor,
        configured=True,
    )


async def schedule_for(session: AsyncSession, *, company_id: int, tier_id: int) -> FeeSchedule:
    row = await FeeScheduleRepository(session, company_id).of_tier(tier_id)
    return DEFAULT_SCHEDULE if row is None else _of_row(row)


async def _own_tier(session: AsyncSession, *, company_id: int, tier_id: int) -> Tier:
    tier = await TierRepository(session, company_id).get(tier_id)
    if tier is None:
        raise TierNotFound()
    return tier


async def tier_schedule(session: AsyncSession, *, company_id: int, tier_id: int) -> FeeSchedule:
    await _own_tier(session, company_id=company_id, tier_id=tier_id)
    return await schedule_for(session, company_id=company_id, tier_id=tier_id)


async def set_schedule(
    session: AsyncSession, *, company_id: int, tier_id: int, schedule: FeeSchedule
) -> FeeSchedule:
    await _own_tier(session, company_id=company_id, tier_id=tier_id)
    now = utcnow()
    values = {
        "topup_fee_percent": format(schedule.topup_percent, "f"),
        "topup_fixed_fee_minor": schedule.topup_fixed_minor,
        "unload_fee_percent": format(schedule.unload_percent, "f"),
        "unload_fixed_fee_minor": schedule.unload_fixed_minor,
        "decline_fee_minor": schedule.decline_fee_minor,
    }
    schedules = FeeScheduleRepository(session, company_id)
    await schedules.insert_if_missing(tier_id, now=now, values=values)
    row = await schedules.of_tier(tier_id, lock=True)
    assert row is not None  # inserted above, or there already
    for name, value in values.items():
        setattr(row, name, value)
    row.updated_at = now
    await session.flush()
    return _of_row(row)
