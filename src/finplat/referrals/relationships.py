"""Who referred whom, recorded when the referred user signs up (the partner posts it after
creating the user), and the welcome reward it promises the friend."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.kit.clock import utcnow
from finplat.kyc import statuses
from finplat.referrals import computation, programs
from finplat.referrals.errors import (
    AlreadyReferred,
    ReferralCycle,
    ReferralProgramNotActive,
    SelfReferral,
)
from finplat.referrals.models import ReferralProgram, ReferralRelationship, ReferralReward
from finplat.referrals.repository import RelationshipRepository, RewardRepository
from finplat.referrals.schemas import ProgramStatus
from finplat.users import service as users

WELCOME = "WELCOME"
AWAITING_KYC = "AWAITING_KYC"
CLAWBACK_WINDOW = "CLAWBACK_WINDOW"


async def record(
    session: AsyncSession,
    *,
    company_id: int,
    program_id: str,
    referrer_user_id: int,
    referred_user_id: int,
) -> ReferralRelationship:
    program = await programs.require(session, company_id=company_id, program_id=program_id)
    if program.status != ProgramStatus.ACTIVE:
        raise ReferralProgramNotActive()
    if referrer_user_id == referred_user_id:
        raise SelfReferral()
    await users.get_user(session, company_id=company_id, user_id=referrer_user_id)
    friend = await users.get_user(session, company_id=company_id, user_id=referred_user_id)
    repository = RelationshipRepository(session, company_id)
    if await repository.of_referred(referred_user_id) is not None:
        raise AlreadyReferred()
    upstream = await repository.of_referred(referrer_user_id)
    if upstream is not None and upstream.referrer_user_id == referred_user_id:
        raise ReferralCycle()
    now = utcnow()
    relationship = ReferralRelationship(
        id=str(uuid.uuid4()),
        program_id=program.id,
        referrer_user_id=referrer_user_id,
        referred_user_id=referred_user_id,
        created_at=now,
    )
    try:
        async with session.begin_nested():
            await repository.add(relationship)
    except IntegrityError:
        raise AlreadyReferred() from None  # a parallel request recorded it first
    level = await programs.relevel(session, program, referrer_user_id, now)
    if level.welcome_minor > 0:
        approved = friend.kyc_status == statuses.APPROVED
        await add_reward(
            session,
            program,
            relationship,
            event_type=WELCOME,
            beneficiary_user_id=referred_user_id,
            role="REFERRED",
            level_code=level.code,
            basis_minor=level.welcome_minor,
            computed=computation.fixed(
                level.welcome_minor,
                currency=program.payout_currency,
                level_code=level.code,
                rule="LEVEL_WELCOME_REWARD",
            ),
            occurred_at=now,
            pending=not approved,
        )
    return relationship


async def add_reward(
    session: AsyncSession,
    program: ReferralProgram,
    relationship: ReferralRelationship,
    *,
    event_type: str,
    beneficiary_user_id: int,
    role: str,
    level_code: str,
    basis_minor: int,
    computed: computation.Computed,
    occurred_at: datetime,
    pending: bool = False,
    source_funding_id: int = 0,
    source_card_id: int | None = None,
    topup_volume_minor: int = 0,
    basis_currency: str | None = None,
    boost_id: str = "",
) -> ReferralReward:
    """A new ledger item: `PENDING` while it waits for the friend's approval, else `HELD`
    for the programme's hold days."""
    reward = ReferralReward(
        id=str(uuid.uuid4()),
        program_id=program.id,
        relationship_id=relationship.id,
        beneficiary_user_id=beneficiary_user_id,
        friend_user_id=relationship.referred_user_id,
        event_type=event_type,
        beneficiary_role=role,
        level_code=level_code,
        basis_minor=basis_minor,
        basis_currency=basis_currency or program.payout_currency,
        amount_minor=computed.amount_minor,
        currency=program.payout_currency,
        delivery_mode=program.delivery_mode,
        stage="PENDING" if pending else "HELD",
        explanation=computed.explanation,
        source_funding_id=source_funding_id,
        source_card_id=source_card_id,
        topup_volume_minor=topup_volume_minor,
        boost_id=boost_id,
        held_until=None if pending else occurred_at + timedelta(days=program.hold_days),
        hold_reason=AWAITING_KYC if pending else CLAWBACK_WINDOW,
        occurred_at=occurred_at,
    )
    await RewardRepository(session, program.company_id).add(reward)
    return reward
