"""The reward ledger's background work (the referral job in `finplat.jobs`).

The top-up path is not touched: every completed top-up is a `card_fundings` row, whichever
lane made it (the route, the batched lane, an automatic top-up), so the job reads those of
referred users that it has not seen yet, and gives their rewards after the fact. Each top-up
is looked at once (`referral_topups_seen`, whose key a parallel copy of the job collides on),
each in its own transaction. Then held rewards whose top-up was unloaded within the hold are
cancelled (clawback), welcome rewards of friends approved since are held, and holds that ran
out are released (`PAYABLE`; a reward of 0 is `PAID` at once: there is nothing to move).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db.unit_of_work import unit_of_work
from finplat.kit.clock import utcnow
from finplat.referrals import computation, payouts, programs, repository
from finplat.referrals.levels import CommissionBasis
from finplat.referrals.models import ReferralProgram
from finplat.referrals.relationships import add_reward
from finplat.referrals.repository import (
    ProgramRepository,
    RelationshipRepository,
    RewardRepository,
    UnseenTopup,
)
from finplat.referrals.schemas import ProgramStatus

BATCH = 200
QUALIFICATION = "QUALIFICATION"
TOPUP = "TOPUP"
UNLOADED = "TOPUP_UNLOADED"


async def run_once(factory: async_sessionmaker[AsyncSession]) -> dict[str, int]:
    counts = {"topups": 0, "clawed_back": 0, "welcomes_held": 0, "released": 0, "settled": 0}
    async with factory() as session:
        companies = await repository.companies_with_programs(session)
    for company_id in companies:
        async with factory() as session:
            found = await repository.unseen_topups(session, company_id=company_id, limit=BATCH)
        for topup in found:
            if await _one_topup(factory, company_id, topup):
                counts["topups"] += 1
        async with unit_of_work(factory) as session:
            counts["clawed_back"] += await _claw_back(session, company_id)
        async with unit_of_work(factory) as session:
            counts["welcomes_held"] += await _hold_approved_welcomes(session, company_id)
        async with unit_of_work(factory) as session:
            counts["released"] += await _release_due(session, company_id)
        async with unit_of_work(factory) as session:
            counts["settled"] += await payouts.settle_paying(session, company_id=company_id)
    return counts


async def _one_topup(
    factory: async_sessionmaker[AsyncSession], company_id: int, topup: UnseenTopup
) -> bool:
    try:
        async with unit_of_work(factory) as session:
            now = utcnow()
            await repository.mark_seen(
                session, company_id=company_id, funding_id=topup.funding_id, now=now
            )
            program = await ProgramRepository(session, company_id).current()
            if program is not None:
                await _accrue(session, program, topup, now)
    except IntegrityError:
        return False  # another copy of the job took this top-up
    return True


async def _accrue(
    session: AsyncSession, program: ReferralProgram, topup: UnseenTopup, now: datetime
) -> None:
    """A friend's top-up earns the referrer a commission, and the first qualifying one a
    qualification reward, both at the level the referrer is at when it arrives; then the
    level is decided again with the top-up counted."""
    if program.status != ProgramStatus.ACTIVE or topup.currency != program.payout_currency:
        return
    relationship = await RelationshipRepository(session, program.company_id).by_id(
        topup.relationship_id, lock=True
    )
    if relationship.program_id != program.id:
        return
    eligible_until = relationship.created_at + timedelta(
        days=programs.DAYS_PER_MONTH * program.commission_eligibility_months
    )
    if topup.completed_at > eligible_until:
        return
    referrer = relationship.referrer_user_id
    joined = await programs.member(session, program, referrer, now)
    level = programs.level_by_code(program, joined.level_code)
    by_fee = level.commission_basis == CommissionBasis.FEE
    basis_minor = topup.fee_minor if by_fee else topup.amount_minor
    await add_reward(
        session,
        program,
        relationship,
        event_type=TOPUP,
        beneficiary_user_id=referrer,
        role="REFERRER",
        level_code=level.code,
        basis_minor=basis_minor,
        computed=computation.bps_of_basis(
            basis_minor,
            level.commission_bps,
            currency=program.payout_currency,
            level_code=level.code,
            basis=level.commission_basis.value,
        ),
        occurred_at=topup.completed_at,
        source_funding_id=topup.funding_id,
        source_card_id=topup.card_id,
        topup_volume_minor=topup.amount_minor,
        basis_currency=topup.currency,
    )
    if relationship.qualified_at is None and topup.amount_minor >= program.qualifying_topup_minor:
        relationship.qualified_at = topup.completed_at
        await session.flush()
        if level.qualification_minor > 0:
            await add_reward(
                session,
                program,
                relationship,
                event_type=QUALIFICATION,
                beneficiary_user_id=referrer,
                role="REFERRER",
                level_code=level.code,
                basis_minor=topup.amount_minor,
                computed=computation.fixed(
                    level.qualification_minor,
                    currency=program.payout_currency,
                    level_code=level.code,
                    rule="LEVEL_QUALIFICATION_REWARD",
                ),
                occurred_at=topup.completed_at,
                source_funding_id=topup.funding_id,
                source_card_id=topup.card_id,
                basis_currency=topup.currency,
            )
    await programs.relevel(session, program, referrer, now)


async def _claw_back(session: AsyncSession, company_id: int) -> int:
    """Held rewards whose top-up's card was unloaded after the top-up: cancelled."""
    rewards = RewardRepository(session, company_id)
    program = await ProgramRepository(session, company_id).current()
    now = utcnow()
    cancelled = 0
    referrers: set[int] = set()
    for reward_id, beneficiary in await rewards.held_with_unload():
        if await rewards.move(
            reward_id,
            from_=("HELD",),
            to="CANCELLED",
            cancel_reason=UNLOADED,
            cancelled_at=now,
            updated_at=now,
        ):
            cancelled += 1
            referrers.add(beneficiary)
    if program is not None:
        for user_id in sorted(referrers):
            await programs.relevel(session, program, user_id, now)
    return cancelled


async def _hold_approved_welcomes(session: AsyncSession, company_id: int) -> int:
    program = await ProgramRepository(session, company_id).current()
    if program is None:
        return 0
    rewards = RewardRepository(session, company_id)
    now = utcnow()
    held = 0
    for reward_id in await rewards.pending_welcomes_approved():
        if await rewards.move(
            reward_id,
            from_=("PENDING",),
            to="HELD",
            hold_reason="CLAWBACK_WINDOW",
            held_until=now + timedelta(days=program.hold_days),
            updated_at=now,
        ):
            held += 1
    return held


async def _release_due(session: AsyncSession, company_id: int) -> int:
    rewards = RewardRepository(session, company_id)
    now = utcnow()
    released = 0
    for reward_id, amount_minor in await rewards.due_for_release(now):
        if amount_minor == 0:
            moved = await rewards.move(
                reward_id,
                from_=("HELD",),
                to="PAID",
                released_at=now,
                paid_at=now,
                updated_at=now,
            )
        else:
            moved = await rewards.move(
                reward_id, from_=("HELD",), to="PAYABLE", released_at=now, updated_at=now
            )
        released += int(moved)
    return released
