"""The programme's community: members on a multi-level plan earn `L2Bps` of the top-ups of
their friends' friends and `L3Bps` one level further, on the same basis (fee or volume) as
the direct referrer's commission, while their membership is active. Revoking (with its
required reason) stops every further accrual to the member; what accrued before stays in the
ledger and follows its own stages. Every change bumps the programme's revision; a member
records the revision it was enrolled under (`PlanRevision`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.errors import Conflict, NotFound, ValidationFailed
from finplat.kit.clock import utcnow
from finplat.referrals import programs
from finplat.referrals.models import ReferralCommunityMember, ReferralProgram
from finplat.referrals.repository import RelationshipRepository
from finplat.users import service as users

ACTIVE = "ACTIVE"
REVOKED = "REVOKED"
LEVELS = ("COMMUNITY_L2", "COMMUNITY_L3")


class CommunityMemberNotFound(NotFound):
    code = "COMMUNITY_MEMBER_NOT_FOUND"
    message = "That user is not a member of the programme's community."


class CommunityMemberExists(Conflict):
    code = "COMMUNITY_MEMBER_EXISTS"
    message = "That user is already enrolled in the programme's community."


class InvalidCommunityTerms(ValidationFailed):
    code = "INVALID_COMMUNITY_TERMS"
    message = "The community membership's terms are not consistent."


@dataclass(frozen=True, slots=True)
class Enrolment:
    user_id: int
    plan: str
    l2_bps: int
    l3_bps: int
    expires_at: datetime | None
    agreement_reference: str | None
    notes: str | None


async def _find(
    session: AsyncSession, company_id: int, program_id: str, user_id: int, *, lock: bool = False
) -> ReferralCommunityMember | None:
    stmt = (
        select(ReferralCommunityMember)
        .where(
            ReferralCommunityMember.company_id == company_id,
            ReferralCommunityMember.program_id == program_id,
            ReferralCommunityMember.user_id == user_id,
        )
        .execution_options(populate_existing=True)
    )
    if lock:
        stmt = stmt.with_for_update()
    found: ReferralCommunityMember | None = (await session.execute(stmt)).scalar_one_or_none()
    return found


async def enrol(
    session: AsyncSession, *, company_id: int, program_id: str, enrolment: Enrolment
) -> ReferralCommunityMember:
    now = utcnow()
    if enrolment.expires_at is not None and enrolment.expires_at <= now:
        raise InvalidCommunityTerms(validation_errors={"ExpiresAt": ["Must be in the future."]})
    program = await programs.require(
        session, company_id=company_id, program_id=program_id, lock=True
    )
    await users.get_user(session, company_id=company_id, user_id=enrolment.user_id)
    if await _find(session, company_id, program.id, enrolment.user_id) is not None:
        raise CommunityMemberExists()
    upstream = await RelationshipRepository(session, company_id).of_referred(enrolment.user_id)
    await programs.bump_revision(session, program)
    member = ReferralCommunityMember(
        id=str(uuid.uuid4()),
        company_id=company_id,
        program_id=program.id,
        user_id=enrolment.user_id,
        plan=enrolment.plan,
        parent_user_id=None if upstream is None else upstream.referrer_user_id,
        plan_revision=program.revision,
        l2_bps=enrolment.l2_bps,
        l3_bps=enrolment.l3_bps,
        enabled_at=now,
        expires_at=enrolment.expires_at,
        status=ACTIVE,
        agreement_reference=enrolment.agreement_reference,
        notes=enrolment.notes,
    )
    try:
        async with session.begin_nested():
            session.add(member)
            await session.flush()
    except IntegrityError:
        raise CommunityMemberExists() from None
    return member


async def member(
    session: AsyncSession, *, company_id: int, program_id: str, user_id: int
) -> ReferralCommunityMember:
    await programs.require(session, company_id=company_id, program_id=program_id)
    await users.get_user(session, company_id=company_id, user_id=user_id)
    found = await _find(session, company_id, program_id, user_id)
    if found is None:
        raise CommunityMemberNotFound()
    return found


async def revoke(
    session: AsyncSession, *, company_id: int, program_id: str, user_id: int, reason: str
) -> ReferralCommunityMember:
    """Revoke the membership: no commission accrues to the member from now on. A member
    already revoked is answered as it stands."""
    program = await programs.require(
        session, company_id=company_id, program_id=program_id, lock=True
    )
    await users.get_user(session, company_id=company_id, user_id=user_id)
    found = await _find(session, company_id, program.id, user_id, lock=True)
    if found is None:
        raise CommunityMemberNotFound()
    if found.status != REVOKED:
        found.status = REVOKED
        found.revoked_at = utcnow()
        found.revoke_reason = reason
        await programs.bump_revision(session, program)
    return found


async def earning_at(
    session: AsyncSession, program: ReferralProgram, user_id: int, at: datetime
) -> ReferralCommunityMember | None:
    """The user's membership if it earns at `at` (read under a row lock, so a revocation
    committed before is seen and one in progress waits for this accrual or follows it)."""
    found = await _find(session, program.company_id, program.id, user_id, lock=True)
    if found is None or found.status != ACTIVE:
        return None
    if found.expires_at is not None and at >= found.expires_at:
        return None
    return found


async def upline(session: AsyncSession, company_id: int, user_id: int, depth: int) -> list[int]:
    """Who referred `user_id`, who referred them, ... up to `depth` users."""
    found: list[int] = []
    relationships = RelationshipRepository(session, company_id)
    current = user_id
    for _ in range(depth):
        upstream = await relationships.of_referred(current)
        if upstream is None or upstream.referrer_user_id in found:
            break
        found.append(upstream.referrer_user_id)
        current = upstream.referrer_user_id
    return found
