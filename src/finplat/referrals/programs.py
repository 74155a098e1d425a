"""The company's one referral programme: configuring it (every change bumps its revision)
and the members' levels, recorded with the reason of each change."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.errors import Conflict
from finplat.kit.clock import utcnow
from finplat.kit.money import ExcessPrecision, UnknownCurrency, normalize_currency, to_minor
from finplat.referrals.errors import (
    InvalidReferralProgram,
    PayoutCurrencyFixed,
    ReferralProgramNotFound,
)
from finplat.referrals.levels import (
    CommissionBasis,
    Level,
    LevelBasis,
    LevelChangeReason,
    by_code,
    level_for,
    problems,
)
from finplat.referrals.models import ReferralLevelChange, ReferralMember, ReferralProgram
from finplat.referrals.repository import (
    LevelChangeRepository,
    MemberRepository,
    ProgramRepository,
    RelationshipRepository,
    RewardRepository,
)

DAYS_PER_MONTH = 30  # a look-back of N months is N x 30 days


class StaleProgramRevision(Conflict):
    code = "STALE_PROGRAM_REVISION"
    message = "The programme changed since that revision; read it again."


@dataclass(frozen=True, slots=True)
class LevelTerms:
    code: str
    name: str
    threshold: Decimal
    commission_basis: CommissionBasis
    commission_bps: int
    welcome: Decimal
    qualification: Decimal


@dataclass(frozen=True, slots=True)
class ProgramTerms:
    status: str
    level_basis: LevelBasis
    level_lookback_months: int
    commission_eligibility_months: int
    delivery_mode: str
    payout_currency: str
    voucher_claim_days: int
    hold_days: int
    qualifying_topup_minimum: Decimal
    levels: tuple[LevelTerms, ...]


def levels_of(program: ReferralProgram) -> list[Level]:
    return [Level.stored(row) for row in program.levels]


def level_by_code(program: ReferralProgram, code: str) -> Level:
    """The member's level (the lowest when their level left the programme)."""
    levels = levels_of(program)
    return by_code(levels, code) or levels[0]


def lookback_start(program: ReferralProgram, now: datetime) -> datetime:
    return now - timedelta(days=DAYS_PER_MONTH * program.level_lookback_months)


async def current(session: AsyncSession, *, company_id: int) -> ReferralProgram | None:
    return await ProgramRepository(session, company_id).current()


async def require(
    session: AsyncSession, *, company_id: int, program_id: str, lock: bool = False
) -> ReferralProgram:
    """The company's programme named `program_id` (404 for any other id, another company's
    included)."""
    program = await ProgramRepository(session, company_id).current(lock=lock)
    if program is None or program.id != program_id:
        raise ReferralProgramNotFound()
    return program


def _minor(amount: Decimal, currency: str, field: str) -> int:
    try:
        return to_minor(amount, currency)
    except ExcessPrecision as exc:
        raise InvalidReferralProgram(str(exc), validation_errors={field: [str(exc)]}) from None


def _levels(terms: ProgramTerms, currency: str) -> list[Level]:
    built: list[Level] = []
    for index, level in enumerate(terms.levels):
        where = f"Levels[{index}]"
        if terms.level_basis == LevelBasis.QUALIFIED_REFERRALS:
            if level.threshold != level.threshold.to_integral_value():
                raise InvalidReferralProgram(
                    validation_errors={
                        f"{where}.Threshold": ["A number of friends: a whole number."]
                    }
                )
            threshold = int(level.threshold)
        else:
            threshold = _minor(level.threshold, currency, f"{where}.Threshold")
        built.append(
            Level(
                code=level.code,
                name=level.name,
                threshold=threshold,
                commission_basis=level.commission_basis,
                commission_bps=level.commission_bps,
                welcome_minor=_minor(level.welcome, currency, f"{where}.WelcomeReward"),
                qualification_minor=_minor(
                    level.qualification, currency, f"{where}.QualificationReward"
                ),
            )
        )
    found = problems(built)
    if found:
        raise InvalidReferralProgram(validation_errors={"Levels": found})
    return built


async def configure(
    session: AsyncSession,
    *,
    company_id: int,
    terms: ProgramTerms,
    expected_revision: int | None,
) -> ReferralProgram:
    """Create the programme or replace its terms; the revision grows by one either way."""
    try:
        currency = normalize_currency(terms.payout_currency)
    except UnknownCurrency as exc:
        raise InvalidReferralProgram(validation_errors={"PayoutCurrency": [str(exc)]}) from None
    levels = _levels(terms, currency)
    minimum = _minor(terms.qualifying_topup_minimum, currency, "QualifyingTopupMinimum")
    repository = ProgramRepository(session, company_id)
    program = await repository.current(lock=True)
    current_revision = 0 if program is None else program.revision
    if expected_revision is not None and expected_revision != current_revision:
        raise StaleProgramRevision()
    now = utcnow()
    if program is None:
        program = ReferralProgram(id=str(uuid.uuid4()), revision=0, created_at=now)
    elif program.payout_currency != currency:
        raise PayoutCurrencyFixed(
            validation_errors={
                "PayoutCurrency": [f"The programme pays in {program.payout_currency}."]
            },
        )
    program.status = terms.status
    program.revision = current_revision + 1
    program.level_basis = terms.level_basis.value
    program.level_lookback_months = terms.level_lookback_months
    program.commission_eligibility_months = terms.commission_eligibility_months
    program.delivery_mode = terms.delivery_mode
    program.payout_currency = currency
    program.voucher_claim_days = terms.voucher_claim_days
    program.hold_days = terms.hold_days
    program.qualifying_topup_minor = minimum
    program.levels = [level.stored_form() for level in levels]
    program.updated_at = now
    if current_revision == 0:
        await repository.add(program)
    else:
        await session.flush()
        await _relevel_all(session, program, now)
    return program


async def bump_revision(session: AsyncSession, program: ReferralProgram) -> None:
    """Every change of the programme's rules (its terms, a boost, a member) bumps it."""
    program.revision += 1
    program.updated_at = utcnow()
    await session.flush()


async def measure(
    session: AsyncSession, program: ReferralProgram, user_id: int, now: datetime
) -> int:
    """What the referrer's level is decided by, within the look-back."""
    since = lookback_start(program, now)
    if program.level_basis == LevelBasis.QUALIFIED_REFERRALS:
        return await RelationshipRepository(session, program.company_id).qualified_since(
            user_id, since
        )
    return await RewardRepository(session, program.company_id).volume_since(user_id, since)


async def member(
    session: AsyncSession, program: ReferralProgram, user_id: int, now: datetime
) -> ReferralMember:
    """The referrer's membership (joining at the lowest level, recorded, on the first call)."""
    repository = MemberRepository(session, program.company_id)
    found = await repository.find(program.id, user_id, lock=True)
    if found is not None:
        return found
    lowest = levels_of(program)[0]
    joined = ReferralMember(program_id=program.id, user_id=user_id, level_code=lowest.code)
    await repository.add(joined)
    await _record_change(
        session, program, user_id, None, lowest.code, LevelChangeReason.JOINED, now
    )
    return joined


async def relevel(
    session: AsyncSession, program: ReferralProgram, user_id: int, now: datetime
) -> Level:
    """Put the referrer at the level their measure reaches now (recording a change)."""
    joined = await member(session, program, user_id, now)
    levels = levels_of(program)
    reached = level_for(levels, await measure(session, program, user_id, now))
    if reached.code != joined.level_code:
        before = by_code(levels, joined.level_code)
        if before is None:
            reason = LevelChangeReason.PROGRAM_CHANGED
        elif reached.threshold > before.threshold:
            reason = LevelChangeReason.THRESHOLD_REACHED
        else:
            reason = LevelChangeReason.THRESHOLD_LOST
        await _record_change(
            session, program, user_id, joined.level_code, reached.code, reason, now
        )
        joined.level_code = reached.code
        await session.flush()
    return reached


async def _relevel_all(session: AsyncSession, program: ReferralProgram, now: datetime) -> None:
    """After the levels changed: a member whose level is gone takes the one they reach."""
    codes = {level.code for level in levels_of(program)}
    for row in await MemberRepository(session, program.company_id).of_program(program.id):
        if row.level_code not in codes:
            await relevel(session, program, row.user_id, now)


async def _record_change(
    session: AsyncSession,
    program: ReferralProgram,
    user_id: int,
    from_level: str | None,
    to_level: str,
    reason: LevelChangeReason,
    now: datetime,
) -> None:
    await LevelChangeRepository(session, program.company_id).add(
        ReferralLevelChange(
            program_id=program.id,
            user_id=user_id,
            from_level=from_level,
            to_level=to_level,
            reason=reason.value,
            program_revision=program.revision,
            changed_at=now,
        )
    )
