"""SQL of the referral programme, every statement scoped to one company (the accrual's
cross-company scans excepted: they only find work, then act through a company's repository)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, exists, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards.funding.models import CardFunding
from finplat.cards.models import Card
from finplat.db.repository import CompanyRepository
from finplat.kit.pagination import PageRequest, PageSlice, fetch_page
from finplat.referrals.models import (
    ReferralLevelChange,
    ReferralMember,
    ReferralProgram,
    ReferralRelationship,
    ReferralReward,
    ReferralTopupSeen,
)
from finplat.users.models import User

LIVE_STAGES = ("PENDING", "HELD", "PAYABLE", "PAYING")


class ProgramRepository(CompanyRepository[ReferralProgram]):
    model = ReferralProgram

    async def current(self, *, lock: bool = False) -> ReferralProgram | None:
        stmt = self.scoped().execution_options(populate_existing=True)
        if lock:
            stmt = stmt.with_for_update()
        found: ReferralProgram | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found


class RelationshipRepository(CompanyRepository[ReferralRelationship]):
    model = ReferralRelationship

    async def of_referred(self, user_id: int) -> ReferralRelationship | None:
        stmt = self.scoped().where(ReferralRelationship.referred_user_id == user_id)
        found: ReferralRelationship | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found

    async def by_id(self, relationship_id: str, *, lock: bool = False) -> ReferralRelationship:
        stmt = (
            self.scoped()
            .where(ReferralRelationship.id == relationship_id)
            .execution_options(populate_existing=True)
        )
        if lock:
            stmt = stmt.with_for_update()
        return (await self.session.execute(stmt)).scalar_one()

    async def qualified_since(self, referrer_user_id: int, since: datetime) -> int:
        stmt = select(func.count()).where(
            ReferralRelationship.company_id == self.company_id,
            ReferralRelationship.referrer_user_id == referrer_user_id,
            ReferralRelationship.qualified_at >= since,
        )
        return int((await self.session.execute(stmt)).scalar_one())

    async def qualified_between(self, referrer_user_id: int, start: datetime, end: datetime) -> int:
        """Friends referred in [start, end) who have qualified."""
        stmt = select(func.count()).where(
            ReferralRelationship.company_id == self.company_id,
            ReferralRelationship.referrer_user_id == referrer_user_id,
            ReferralRelationship.created_at >= start,
            ReferralRelationship.created_at < end,
            ReferralRelationship.qualified_at.is_not(None),
        )
        return int((await self.session.execute(stmt)).scalar_one())

    async def counts(self, program_id: str) -> tuple[int, int]:
        stmt = select(func.count(), func.count(ReferralRelationship.qualified_at)).where(
            ReferralRelationship.company_id == self.company_id,
            ReferralRelationship.program_id == program_id,
        )
        total, qualified = (await self.session.execute(stmt)).one()
        return int(total), int(qualified)


class MemberRepository(CompanyRepository[ReferralMember]):
    model = ReferralMember

    async def find(
        self, program_id: str, user_id: int, *, lock: bool = False
    ) -> ReferralMember | None:
        stmt = self.scoped().where(
            ReferralMember.program_id == program_id, ReferralMember.user_id == user_id
        )
        if lock:
            stmt = stmt.with_for_update()
        found: ReferralMember | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found

    async def of_program(self, program_id: str) -> Sequence[ReferralMember]:
        stmt = self.scoped().where(ReferralMember.program_id == program_id)
        return list((await self.session.execute(stmt)).scalars())


class LevelChangeRepository(CompanyRepository[ReferralLevelChange]):
    model = ReferralLevelChange

    async def page(
        self, program_id: str, user_id: int, request: PageRequest
    ) -> PageSlice[ReferralLevelChange]:
        stmt = (
            self.scoped()
            .where(
                ReferralLevelChange.program_id == program_id,
                ReferralLevelChange.user_id == user_id,
            )
            .order_by(ReferralLevelChange.id)
        )
        return await fetch_page(self.session, stmt, request)


@dataclass(frozen=True, slots=True)
class HeldReward:
    reward_id: str
    beneficiary_user_id: int
    boost_id: str
    amount_minor: int
    event_type: str


@dataclass(frozen=True, slots=True)
class LedgerTotals:
    pending_liability_minor: int
    paid_minor: int
    topup_volume_minor: int


class RewardRepository(CompanyRepository[ReferralReward]):
    model = ReferralReward

    async def by_id(self, reward_id: str) -> ReferralReward | None:
        stmt = (
            self.scoped()
            .where(ReferralReward.id == reward_id)
            .execution_options(populate_existing=True)
        )
        found: ReferralReward | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found

    async def page(
        self, user_id: int, request: PageRequest, *, program_id: str | None
    ) -> PageSlice[ReferralReward]:
        stmt = (
            self.scoped()
            .where(ReferralReward.beneficiary_user_id == user_id)
            .order_by(ReferralReward.created_at, ReferralReward.id)
        )
        if program_id is not None:
            stmt = stmt.where(ReferralReward.program_id == program_id)
        return await fetch_page(self.session, stmt, request)

    async def move(
        self,
        reward_id: str,
        *,
        from_: Sequence[str],
        to: str,
        voucher_valid_at: datetime | None = None,
        **values: Any,
    ) -> bool:
        """Change the reward's stage if it is still in one of `from_` (exactly once) and, with
        `voucher_valid_at`, if its assigned voucher (if any) is still valid then."""
        stmt = (
            update(ReferralReward)
            .where(
                ReferralReward.company_id == self.company_id,
                ReferralReward.id == reward_id,
                ReferralReward.stage.in_(from_),
            )
            .values(stage=to, **values)
            .execution_options(synchronize_session=False)
        )
        if voucher_valid_at is not None:
            stmt = stmt.where(
                or_(
                    ReferralReward.voucher_valid_until.is_(None),
                    ReferralReward.voucher_valid_until > voucher_valid_at,
                )
            )
        result = await self.session.execute(stmt)
        return bool(result.rowcount)  # type: ignore[attr-defined]

    async def paying(self) -> Sequence[ReferralReward]:
        stmt = self.scoped().where(ReferralReward.stage == "PAYING")
        return list((await self.session.execute(stmt)).scalars())

    async def volume_since(self, referrer_user_id: int, since: datetime) -> int:
        stmt = select(func.coalesce(func.sum(ReferralReward.topup_volume_minor), 0)).where(
            ReferralReward.company_id == self.company_id,
            ReferralReward.beneficiary_user_id == referrer_user_id,
            ReferralReward.event_type == "TOPUP",
            ReferralReward.stage != "CANCELLED",
            ReferralReward.occurred_at >= since,
        )
        return int((await self.session.execute(stmt)).scalar_one())

    async def totals(self, program_id: str) -> LedgerTotals:
        live = ReferralReward.stage.in_(LIVE_STAGES)
        stmt = select(
            func.coalesce(func.sum(ReferralReward.amount_minor).filter(live), 0),
            func.coalesce(
                func.sum(ReferralReward.amount_minor).filter(ReferralReward.stage == "PAID"), 0
            ),
            func.coalesce(
                func.sum(ReferralReward.topup_volume_minor).filter(
                    ReferralReward.event_type == "TOPUP", ReferralReward.stage != "CANCELLED"
                ),
                0,
            ),
        ).where(
            ReferralReward.company_id == self.company_id,
            ReferralReward.program_id == program_id,
        )
        pending, paid, volume = (await self.session.execute(stmt)).one()
        return LedgerTotals(int(pending), int(paid), int(volume))

    async def pending_welcomes_approved(self) -> Sequence[str]:
        stmt = (
            select(ReferralReward.id)
            .join(User, User.id == ReferralReward.friend_user_id)
            .where(
                ReferralReward.company_id == self.company_id,
                ReferralReward.stage == "PENDING",
                User.kyc_status == "APPROVED",
            )
        )
        return list((await self.session.execute(stmt)).scalars())

    async def has_boost_award(self, boost_id: str, user_id: int) -> bool:
        stmt = select(ReferralReward.id).where(
            ReferralReward.company_id == self.company_id,
            ReferralReward.boost_id == boost_id,
            ReferralReward.beneficiary_user_id == user_id,
            ReferralReward.stage != "CANCELLED",
        )
        return (await self.session.execute(stmt.limit(1))).first() is not None

    async def held_with_unload(self) -> Sequence[HeldReward]:
        """Held rewards whose top-up's card was unloaded after the top-up (clawback)."""
        unloaded = exists().where(
            CardFunding.company_id == ReferralReward.company_id,
            CardFunding.card_id == ReferralReward.source_card_id,
            CardFunding.kind == "UNLOAD",
            CardFunding.status == "COMPLETED",
            CardFunding.created_at >= ReferralReward.occurred_at,
        )
        stmt = select(
            ReferralReward.id,
            ReferralReward.beneficiary_user_id,
            ReferralReward.boost_id,
            ReferralReward.amount_minor,
            ReferralReward.event_type,
        ).where(
            ReferralReward.company_id == self.company_id,
            ReferralReward.stage == "HELD",
            ReferralReward.source_card_id.is_not(None),
            unloaded,
        )
        return [HeldReward(*row) for row in (await self.session.execute(stmt)).all()]

    async def due_for_release(self, now: datetime) -> Sequence[tuple[str, int, str]]:
        stmt = select(
            ReferralReward.id, ReferralReward.amount_minor, ReferralReward.delivery_mode
        ).where(
            ReferralReward.company_id == self.company_id,
            ReferralReward.stage == "HELD",
            ReferralReward.held_until <= now,
        )
        return [(r, a, d) for r, a, d in (await self.session.execute(stmt)).all()]

    async def by_assignment(self, assignment_id: str) -> ReferralReward | None:
        stmt = (
            self.scoped()
            .where(ReferralReward.voucher_assignment_id == assignment_id)
            .execution_options(populate_existing=True)
        )
        found: ReferralReward | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found

    async def assigned_vouchers(
        self, user_id: int, request: PageRequest
    ) -> PageSlice[ReferralReward]:
        stmt = (
            self.scoped()
            .where(
                ReferralReward.beneficiary_user_id == user_id,
                ReferralReward.voucher_assignment_id.is_not(None),
            )
            .order_by(ReferralReward.voucher_assigned_at, ReferralReward.id)
        )
        return await fetch_page(self.session, stmt, request)

    async def vouchers_expired(self, now: datetime) -> Sequence[str]:
        """Rewards whose assigned voucher ran out unredeemed."""
        stmt = select(ReferralReward.id).where(
            ReferralReward.company_id == self.company_id,
            ReferralReward.stage == "PAYABLE",
            ReferralReward.voucher_valid_until <= now,
        )
        return list((await self.session.execute(stmt)).scalars())


@dataclass(frozen=True, slots=True)
class UnseenTopup:
    funding_id: int
    card_id: int
    currency: str
    amount_minor: int
    fee_minor: int
    completed_at: datetime
    relationship_id: str


async def unseen_topups(session: AsyncSession, *, company_id: int, limit: int) -> list[UnseenTopup]:
    """Completed top-ups (route, batched lane or automatic) of referred users, made after
    they were referred, that the accrual has not looked at yet; oldest first."""
    seen = exists().where(
        ReferralTopupSeen.company_id == CardFunding.company_id,
        ReferralTopupSeen.funding_id == CardFunding.id,
    )
    stmt = (
        select(
            CardFunding.id,
            CardFunding.card_id,
            CardFunding.currency,
            CardFunding.amount_minor,
            CardFunding.fee_minor,
            CardFunding.completed_at,
            ReferralRelationship.id,
        )
        .join(Card, and_(Card.id == CardFunding.card_id, Card.company_id == CardFunding.company_id))
        .join(
            ReferralRelationship,
            and_(
                ReferralRelationship.company_id == CardFunding.company_id,
                ReferralRelationship.referred_user_id == Card.user_id,
            ),
        )
        .where(
            CardFunding.company_id == company_id,
            CardFunding.kind.in_(("TOPUP", "AUTO_TOPUP")),
            CardFunding.status == "COMPLETED",
            CardFunding.completed_at >= ReferralRelationship.created_at,
            ~seen,
        )
        .order_by(CardFunding.completed_at, CardFunding.id)
        .limit(limit)
    )
    found: list[UnseenTopup] = []
    for funding_id, card_id, currency, amount, fee, completed_at, relationship_id in (
        await session.execute(stmt)
    ).all():
        assert completed_at is not None  # a completed funding
        found.append(
            UnseenTopup(funding_id, card_id, currency, amount, fee, completed_at, relationship_id)
        )
    return found


async def companies_with_programs(session: AsyncSession) -> list[int]:
    stmt = select(ReferralProgram.company_id).order_by(ReferralProgram.company_id)
    return list((await session.execute(stmt)).scalars())


async def mark_seen(
    session: AsyncSession, *, company_id: int, funding_id: int, now: datetime
) -> None:
    session.add(ReferralTopupSeen(company_id=company_id, funding_id=funding_id, seen_at=now))
    await session.flush()


async def user_names(
    session: AsyncSession, *, company_id: int, user_ids: set[int]
) -> dict[int, tuple[str, str]]:
    if not user_ids:
        return {}
    stmt = select(User.id, User.first_name, User.last_name).where(
        User.company_id == company_id, User.id.in_(user_ids)
    )
    return {i: (f, last) for i, f, last in (await session.execute(stmt)).all()}
