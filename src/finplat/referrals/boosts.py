"""Boosts: time-boxed extras of the programme with a funded budget and a maximum number of
awards.

- `MULTIPLIER`: each top-up reward earned in [`StartsAt`, `EndsAt`) gets an extra award of
  the reward times (`Multiplier` - 1), rounded down, at most `MaximumIncrementalReward`.
- `MILESTONE`: a referrer whose friends referred in the window reach `QualifiedFriendCount`
  qualified gets `MilestoneAmount`, once.

An award is allocated by one conditional UPDATE whose WHERE holds the boost active, one more
award within `MaximumAwards` and the amount within what `FundedBudget` leaves, so parallel
accruals never pass either (the losers re-check against the winner's row on PostgreSQL).
An award that does not fit whole is not made. A cancelled award (clawback) gives its award
and budget back. `PolicyHash` is the SHA-256 of the boost's terms and the programme's terms
at the revision the boost was made under; each award's `Explanation` names it.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.errors import Conflict, NotFound
from finplat.kit.clock import utcnow
from finplat.kit.money import ExcessPrecision, to_minor
from finplat.referrals import programs
from finplat.referrals.errors import InvalidReferralProgram
from finplat.referrals.models import ReferralBoost, ReferralProgram
from finplat.referrals.programs import StaleProgramRevision

BOOST = "BOOST"
BOOST_MULTIPLIER = "BOOST_MULTIPLIER"


class BoostKind(StrEnum):
    MULTIPLIER = "MULTIPLIER"
    MILESTONE = "MILESTONE"


class BoostStatus(StrEnum):
    ACTIVE = "ACTIVE"
    PAUSED = "PAUSED"
    SCHEDULED = "SCHEDULED"  # reported before `StartsAt`
    ENDED = "ENDED"  # reported from `EndsAt`
    EXHAUSTED = "EXHAUSTED"  # reported once every award is allocated


class BoostNotFound(NotFound):
    code = "REFERRAL_BOOST_NOT_FOUND"
    message = "No boost with that id in that programme."


class InvalidBoost(InvalidReferralProgram):
    code = "INVALID_REFERRAL_BOOST"
    message = "The boost's terms are not consistent."


class BoostNotPaused(Conflict):
    code = "REFERRAL_BOOST_NOT_PAUSED"
    message = "Only a paused boost can be resumed."


@dataclass(frozen=True, slots=True)
class BoostTerms:
    name: str
    kind: BoostKind
    starts_at: datetime
    ends_at: datetime
    multiplier: Decimal | None
    qualified_friend_count: int | None
    milestone_amount: Decimal | None
    maximum_incremental_reward: Decimal | None
    maximum_awards: int
    funded_budget: Decimal


def reported(boost: ReferralBoost, now: datetime) -> str:
    if boost.status == BoostStatus.PAUSED:
        return BoostStatus.PAUSED.value
    if now < boost.starts_at:
        return BoostStatus.SCHEDULED.value
    if now >= boost.ends_at:
        return BoostStatus.ENDED.value
    if boost.allocated_awards >= boost.maximum_awards:
        return BoostStatus.EXHAUSTED.value
    return BoostStatus.ACTIVE.value


def _minor(amount: Decimal, currency: str, field: str) -> int:
    try:
        return to_minor(amount, currency)
    except ExcessPrecision as exc:
        raise InvalidBoost(str(exc), validation_errors={field: [str(exc)]}) from None


def _check(terms: BoostTerms) -> None:
    problems: dict[str, list[str]] = {}
    if terms.ends_at <= terms.starts_at:
        problems["EndsAt"] = ["Must be after StartsAt."]
    if terms.kind == BoostKind.MULTIPLIER:
        if terms.multiplier is None:
            problems["Multiplier"] = ["Required for a MULTIPLIER boost."]
        if terms.qualified_friend_count is not None or terms.milestone_amount is not None:
            problems["Kind"] = ["A MULTIPLIER boost takes no milestone."]
    else:
        if terms.qualified_friend_count is None or terms.milestone_amount is None:
            problems["QualifiedFriendCount"] = [
                "A MILESTONE boost needs QualifiedFriendCount and MilestoneAmount."
            ]
        if terms.multiplier is not None or terms.maximum_incremental_reward is not None:
            problems["Kind"] = ["A MILESTONE boost takes no multiplier."]
    if problems:
        raise InvalidBoost(validation_errors=problems)


def policy_hash(program: ReferralProgram, boost: ReferralBoost) -> str:
    rules = {
        "boost": {
            "kind": boost.kind,
            "startsAt": boost.starts_at.isoformat(),
            "endsAt": boost.ends_at.isoformat(),
            "multiplier": boost.multiplier,
            "qualifiedFriendCount": boost.qualified_friend_count,
            "milestoneMinor": boost.milestone_minor,
            "maximumIncrementalMinor": boost.maximum_incremental_minor,
            "maximumAwards": boost.maximum_awards,
            "fundedBudgetMinor": boost.funded_budget_minor,
            "currency": boost.currency,
        },
        "program": {
            "levelBasis": program.level_basis,
            "levelLookbackMonths": program.level_lookback_months,
            "commissionEligibilityMonths": program.commission_eligibility_months,
            "holdDays": program.hold_days,
            "qualifyingTopupMinor": program.qualifying_topup_minor,
            "levels": program.levels,
        },
    }
    canonical = json.dumps(rules, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


async def _locked_program(
    session: AsyncSession, company_id: int, program_id: str, expected_revision: int | None
) -> ReferralProgram:
    program = await programs.require(
        session, company_id=company_id, program_id=program_id, lock=True
    )
    if expected_revision is not None and expected_revision != program.revision:
        raise StaleProgramRevision()
    return program


async def create(
    session: AsyncSession,
    *,
    company_id: int,
    program_id: str,
    terms: BoostTerms,
    expected_revision: int | None,
) -> ReferralBoost:
    _check(terms)
    program = await _locked_program(session, company_id, program_id, expected_revision)
    currency = program.payout_currency

    def minor(amount: Decimal | None, field: str) -> int | None:
        return None if amount is None else _minor(amount, currency, field)

    boost = ReferralBoost(
        id=str(uuid.uuid4()),
        program_id=program.id,
        name=terms.name,
        kind=terms.kind.value,
        status=BoostStatus.ACTIVE.value,
        starts_at=terms.starts_at,
        ends_at=terms.ends_at,
        multiplier=None if terms.multiplier is None else str(terms.multiplier),
        qualified_friend_count=terms.qualified_friend_count,
        milestone_minor=minor(terms.milestone_amount, "MilestoneAmount"),
        maximum_incremental_minor=minor(
            terms.maximum_incremental_reward, "MaximumIncrementalReward"
        ),
        maximum_awards=terms.maximum_awards,
        funded_budget_minor=_minor(terms.funded_budget, currency, "FundedBudget"),
        currency=currency,
        allocated_awards=0,
        reserved_budget_minor=0,
        policy_hash="",
    )
    await programs.bump_revision(session, program)
    boost.policy_hash = policy_hash(program, boost)
    boost.company_id = company_id
    session.add(boost)
    await session.flush()
    return boost


async def find(
    session: AsyncSession, *, company_id: int, program_id: str, boost_id: str, lock: bool = False
) -> ReferralBoost:
    stmt = (
        select(ReferralBoost)
        .where(
            ReferralBoost.company_id == company_id,
            ReferralBoost.program_id == program_id,
            ReferralBoost.id == boost_id,
        )
        .execution_options(populate_existing=True)
    )
    if lock:
        stmt = stmt.with_for_update()
    found: ReferralBoost | None = (await session.execute(stmt)).scalar_one_or_none()
    if found is None:
        raise BoostNotFound()
    return found


async def of_program(
    session: AsyncSession, *, company_id: int, program_id: str
) -> list[ReferralBoost]:
    await programs.require(session, company_id=company_id, program_id=program_id)
    stmt = (
        select(ReferralBoost)
        .where(ReferralBoost.company_id == company_id, ReferralBoost.program_id == program_id)
        .order_by(ReferralBoost.created_at, ReferralBoost.id)
    )
    return list((await session.execute(stmt)).scalars())


async def pause(
    session: AsyncSession,
    *,
    company_id: int,
    program_id: str,
    boost_id: str,
    expected_revision: int,
) -> ReferralBoost:
    """Pause the boost if the programme is still at `expected_revision` (409 otherwise);
    the change bumps the revision. A boost already paused is answered as it stands."""
    program = await _locked_program(session, company_id, program_id, expected_revision)
    boost = await find(
        session, company_id=company_id, program_id=program.id, boost_id=boost_id, lock=True
    )
    if boost.status != BoostStatus.PAUSED:
        boost.status = BoostStatus.PAUSED.value
        boost.paused_at = utcnow()
        await programs.bump_revision(session, program)
    return boost


async def resume(
    session: AsyncSession,
    *,
    company_id: int,
    program_id: str,
    boost_id: str,
    expected_revision: int,
) -> ReferralBoost:
    program = await _locked_program(session, company_id, program_id, expected_revision)
    boost = await find(
        session, company_id=company_id, program_id=program.id, boost_id=boost_id, lock=True
    )
    if boost.status != BoostStatus.PAUSED:
        raise BoostNotPaused()
    boost.status = BoostStatus.ACTIVE.value
    boost.paused_at = None
    await programs.bump_revision(session, program)
    return boost


# ------------------------------------------------------------------------ awards (accrual)


async def running(
    session: AsyncSession, program: ReferralProgram, kind: BoostKind, at: datetime
) -> list[ReferralBoost]:
    """The programme's active boosts of `kind` whose window holds `at`."""
    stmt = (
        select(ReferralBoost)
        .where(
            ReferralBoost.company_id == program.company_id,
            ReferralBoost.program_id == program.id,
            ReferralBoost.kind == kind.value,
            ReferralBoost.status == BoostStatus.ACTIVE.value,
            ReferralBoost.starts_at <= at,
            ReferralBoost.ends_at > at,
        )
        .order_by(ReferralBoost.created_at, ReferralBoost.id)
    )
    return list((await session.execute(stmt)).scalars())


async def allocate(session: AsyncSession, boost: ReferralBoost, amount_minor: int) -> bool:
    """One award of `amount_minor`, if the boost is active and has room for it whole."""
    stmt = (
        update(ReferralBoost)
        .where(
            ReferralBoost.company_id == boost.company_id,
            ReferralBoost.id == boost.id,
            ReferralBoost.status == BoostStatus.ACTIVE.value,
            ReferralBoost.allocated_awards < ReferralBoost.maximum_awards,
            ReferralBoost.reserved_budget_minor + amount_minor <= ReferralBoost.funded_budget_minor,
        )
        .values(
            allocated_awards=ReferralBoost.allocated_awards + 1,
            reserved_budget_minor=ReferralBoost.reserved_budget_minor + amount_minor,
            updated_at=utcnow(),
        )
        .execution_options(synchronize_session=False)
    )
    return bool((await session.execute(stmt)).rowcount)  # type: ignore[attr-defined]


async def give_back(
    session: AsyncSession, company_id: int, boost_id: str, amount_minor: int
) -> None:
    """A cancelled award's room returns to the boost."""
    stmt = (
        update(ReferralBoost)
        .where(ReferralBoost.company_id == company_id, ReferralBoost.id == boost_id)
        .values(
            allocated_awards=ReferralBoost.allocated_awards - 1,
            reserved_budget_minor=ReferralBoost.reserved_budget_minor - amount_minor,
            updated_at=utcnow(),
        )
        .execution_options(synchronize_session=False)
    )
    await session.execute(stmt)
