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

import asyncio
from datetime import datetime, timedelta

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db.unit_of_work import unit_of_work
from finplat.kit.clock import utcnow
from finplat.referrals import (
    assigned_vouchers,
    boosts,
    community,
    computation,
    payouts,
    programs,
    repository,
)
from finplat.referrals.boosts import BOOST, BoostKind
from finplat.referrals.levels import CommissionBasis, Level
from finplat.referrals.models import ReferralProgram, ReferralRelationship
from finplat.referrals.relationships import add_reward
from finplat.referrals.repository import (
    HeldReward,
    ProgramRepository,
    RelationshipRepository,
    RewardRepository,
    UnseenTopup,
)
from finplat.referrals.schemas import Delivery, ProgramStatus

BATCH = 200
QUALIFICATION = "QUALIFICATION"
TOPUP = "TOPUP"
UNLOADED = "TOPUP_UNLOADED"


async def run_once(
    factory: async_sessionmaker[AsyncSession], *, concurrency: int = 1
) -> dict[str, int]:
    """One pass over every company with a programme; `concurrency` top-ups are accrued at
    once (each in its own transaction)."""
    counts = {
        "topups": 0,
        "clawed_back": 0,
        "welcomes_held": 0,
        "released": 0,
        "settled": 0,
        "vouchers_expired": 0,
    }
    async with factory() as session:
        companies = await repository.companies_with_programs(session)
    gate = asyncio.Semaphore(concurrency)

    async def one(company_id: int, topup: UnseenTopup) -> bool:
        async with gate:
            return await _one_topup(factory, company_id, topup)

    for company_id in companies:
        async with factory() as session:
            found = await repository.unseen_topups(session, company_id=company_id, limit=BATCH)
        done = await asyncio.gather(*(one(company_id, topup) for topup in found))
        counts["topups"] += sum(done)
        async with unit_of_work(factory) as session:
            counts["clawed_back"] += await _claw_back(session, company_id)
        async with unit_of_work(factory) as session:
            counts["welcomes_held"] += await _hold_approved_welcomes(session, company_id)
        async with unit_of_work(factory) as session:
            counts["released"] += await _release_due(session, company_id)
        async with unit_of_work(factory) as session:
            counts["settled"] += await payouts.settle_paying(session, company_id=company_id)
        async with unit_of_work(factory) as session:
            counts["vouchers_expired"] += await assigned_vouchers.expire(
                session, company_id=company_id
            )
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
    commission = await add_reward(
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
    await _multiplied(session, program, relationship, topup, level, commission.amount_minor)
    await _community(session, program, relationship, topup, level, basis_minor)
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
        await _milestones(session, program, relationship, topup, level)
    await programs.relevel(session, program, referrer, now)


async def _multiplied(
    session: AsyncSession,
    program: ReferralProgram,
    relationship: ReferralRelationship,
    topup: UnseenTopup,
    level: Level,
    base_minor: int,
) -> None:
    """Each multiplier boost running at the top-up adds its award, while it has room."""
    if base_minor <= 0:
        return
    for boost in await boosts.running(session, program, BoostKind.MULTIPLIER, topup.completed_at):
        assert boost.multiplier is not None
        computed = computation.boost_multiplier(
            base_minor,
            boost.multiplier,
            boost.maximum_incremental_minor,
            currency=program.payout_currency,
            level_code=level.code,
            boost_id=boost.id,
            policy_hash=boost.policy_hash,
        )
        if computed.amount_minor <= 0 or not await boosts.allocate(
            session, boost, computed.amount_minor
        ):
            continue
        await add_reward(
            session,
            program,
            relationship,
            event_type=BOOST,
            beneficiary_user_id=relationship.referrer_user_id,
            role="REFERRER",
            level_code=level.code,
            basis_minor=base_minor,
            computed=computed,
            occurred_at=topup.completed_at,
            source_funding_id=topup.funding_id,
            source_card_id=topup.card_id,
            boost_id=boost.id,
        )


async def _community(
    session: AsyncSession,
    program: ReferralProgram,
    relationship: ReferralRelationship,
    topup: UnseenTopup,
    level: Level,
    basis_minor: int,
) -> None:
    """The referrer's referrer earns `L2Bps`, and theirs `L3Bps`, of the commission's basis,
    each only while an active community member."""
    chain = await community.upline(session, program.company_id, relationship.referrer_user_id, 2)
    for depth, (user_id, event_type) in enumerate(zip(chain, community.LEVELS, strict=False)):
        member = await community.earning_at(session, program, user_id, topup.completed_at)
        if member is None:
            continue
        bps = member.l2_bps if depth == 0 else member.l3_bps
        await add_reward(
            session,
            program,
            relationship,
            event_type=event_type,
            beneficiary_user_id=user_id,
            role="COMMUNITY",
            level_code=member.plan,
            basis_minor=basis_minor,
            computed=computation.bps_of_basis(
                basis_minor,
                bps,
                currency=program.payout_currency,
                level_code=member.plan,
                basis=level.commission_basis.value,
            ),
            occurred_at=topup.completed_at,
            source_funding_id=topup.funding_id,
            source_card_id=topup.card_id,
            basis_currency=topup.currency,
        )


async def _milestones(
    session: AsyncSession,
    program: ReferralProgram,
    relationship: ReferralRelationship,
    topup: UnseenTopup,
    level: Level,
) -> None:
    """Each milestone boost whose count of friends referred and qualified in its window the
    referrer reaches now awards its amount, once per referrer (the member row, locked by the
    accrual, makes the check and the award one step)."""
    referrer = relationship.referrer_user_id
    rewards = RewardRepository(session, program.company_id)
    for boost in await boosts.running(session, program, BoostKind.MILESTONE, topup.completed_at):
        assert boost.qualified_friend_count is not None
        assert boost.milestone_minor is not None
        reached = await RelationshipRepository(session, program.company_id).qualified_between(
            referrer, boost.starts_at, boost.ends_at
        )
        if reached < boost.qualified_friend_count:
            continue
        if await rewards.has_boost_award(boost.id, referrer):
            continue
        if not await boosts.allocate(session, boost, boost.milestone_minor):
            continue
        await add_reward(
            session,
            program,
            relationship,
            event_type=BOOST,
            beneficiary_user_id=referrer,
            role="REFERRER",
            level_code=level.code,
            basis_minor=reached,
            computed=computation.fixed(
                boost.milestone_minor,
                currency=program.payout_currency,
                level_code=level.code,
                rule=f"BOOST_MILESTONE:{boost.id}:{boost.policy_hash}",
            ),
            occurred_at=topup.completed_at,
            source_funding_id=topup.funding_id,
            source_card_id=topup.card_id,
            boost_id=boost.id,
        )


async def _claw_back(session: AsyncSession, company_id: int) -> int:
    """Held rewards whose top-up's card was unloaded after the top-up: cancelled; the
    referrers' levels are decided again (their volume fell) and boosts get their room back,
    in that order (member rows before boost rows, as the accrual locks them)."""
    rewards = RewardRepository(session, company_id)
    program = await ProgramRepository(session, company_id).current()
    now = utcnow()
    cancelled: list[HeldReward] = []
    for held in await rewards.held_with_unload():
        if await rewards.move(
            held.reward_id,
            from_=("HELD",),
            to="CANCELLED",
            cancel_reason=UNLOADED,
            cancelled_at=now,
            updated_at=now,
        ):
            cancelled.append(held)
    if program is not None:
        referrers = {h.beneficiary_user_id for h in cancelled if h.event_type == TOPUP}
        for user_id in sorted(referrers):
            await programs.relevel(session, program, user_id, now)
    for held in cancelled:
        if held.boost_id:
            await boosts.give_back(session, company_id, held.boost_id, held.amount_minor)
    return len(cancelled)


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
    program = await programs.current(session, company_id=company_id)
    now = utcnow()
    released = 0
    for reward_id, amount_minor, delivery_mode in await rewards.due_for_release(now):
        if amount_minor == 0:
            moved = await rewards.move(
                reward_id,
                from_=("HELD",),
                to="PAID",
                released_at=now,
                paid_at=now,
                updated_at=now,
            )
        elif delivery_mode == Delivery.VOUCHER and program is not None:
            moved = await rewards.move(
                reward_id,
                from_=("HELD",),
                to="PAYABLE",
                released_at=now,
                updated_at=now,
                **assigned_vouchers.assignment(now, program.voucher_claim_days),
            )
        else:
            moved = await rewards.move(
                reward_id, from_=("HELD",), to="PAYABLE", released_at=now, updated_at=now
            )
        released += int(moved)
    return released
