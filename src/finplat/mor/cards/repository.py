"""All SQL of MOR cards: assignments, cardholders and load requests."""

from __future__ import annotations

from sqlalchemy import ColumnElement, Select, and_, exists, func, not_, or_, select
from sqlalchemy.orm import InstrumentedAttribute

from finplat.cards.models import Card
from finplat.db.repository import CompanyRepository
from finplat.mor.cards.models import MorCardAssignment, MorLoadRequest
from finplat.users.models import User


class AssignmentRepository(CompanyRepository[MorCardAssignment]):
    model = MorCardAssignment

    async def of_card(self, card_id: int) -> list[MorCardAssignment]:
        stmt = self.scoped().where(MorCardAssignment.card_id == card_id)
        return list((await self.session.execute(stmt.order_by(MorCardAssignment.id))).scalars())

    async def current(self, card_id: int, *, lock: bool = False) -> MorCardAssignment | None:
        stmt = self.scoped().where(
            MorCardAssignment.card_id == card_id, MorCardAssignment.unassigned_at.is_(None)
        )
        if lock:
            stmt = stmt.with_for_update().execution_options(populate_existing=True)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def cards_assigned_to(self, user_id: int) -> list[Card]:
        """The company's cards whose current assignee is `user_id`: an open assignment, or a
        card the user holds that has never had one."""
        stmt = (
            select(Card)
            .where(Card.company_id == self.company_id, _assigned_to(self.company_id, user_id))
            .order_by(Card.id)
        )
        return list((await self.session.execute(stmt)).scalars())


def _assigned_to(
    company_id: int, user_id: int | ColumnElement[int] | InstrumentedAttribute[int]
) -> ColumnElement[bool]:
    a = MorCardAssignment
    open_assignment = (
        exists()
        .where(
            a.company_id == company_id,
            a.card_id == Card.id,
            a.user_id == user_id,
            a.unassigned_at.is_(None),
        )
        .correlate_except(a)
    )
    never_assigned = and_(
        Card.user_id == user_id,
        not_(exists().where(a.company_id == company_id, a.card_id == Card.id).correlate_except(a)),
    )
    return or_(open_assignment, never_assigned)


class CardholderRepository(CompanyRepository[User]):
    model = User

    def cardholders(self, *, email: str | None, status: str | None) -> Select[User]:
        """The company's users who are the current assignee of at least one card (cancelled
        ones included: a cancelled card keeps its last assignee), oldest first."""
        stmt = self.scoped().where(
            exists().where(
                Card.company_id == self.company_id, _assigned_to(self.company_id, User.id)
            )
        )
        if email is not None:
            stmt = stmt.where(func.lower(User.email) == email.lower())
        if status is not None:
            stmt = stmt.where(User.status == status)
        return stmt.order_by(User.id)

    async def card_counts(self, user_ids: list[int]) -> dict[int, int]:
        """How many cards each of the users is the current assignee of, in one statement (a
        user holding none is left out)."""
        if not user_ids:
            return {}
        stmt = (
            select(User.id, func.count(Card.id))
            .join(Card, _assigned_to(self.company_id, User.id))
            .where(
                User.company_id == self.company_id,
                User.id.in_(user_ids),
                Card.company_id == self.company_id,
            )
            .group_by(User.id)
        )
        return {int(user_id): int(count) for user_id, count in await self.session.execute(stmt)}


class LoadRequestRepository(CompanyRepository[MorLoadRequest]):
    model = MorLoadRequest

    async def find(self, request_id: int, *, lock: bool = False) -> MorLoadRequest | None:
        stmt = self.scoped().where(MorLoadRequest.id == request_id)
        if lock:
            stmt = stmt.with_for_update().execution_options(populate_existing=True)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    def listing(
        self, *, status: str | None, user_id: int | None, card_id: int | None
    ) -> Select[MorLoadRequest]:
        stmt = self.scoped()
        if status is not None:
            stmt = stmt.where(MorLoadRequest.status == status)
        if user_id is not None:
            stmt = stmt.where(MorLoadRequest.user_id == user_id)
        if card_id is not None:
            stmt = stmt.where(MorLoadRequest.card_id == card_id)
        return stmt.order_by(MorLoadRequest.id.desc())

    async def pending_of_card(self, card_id: int) -> list[MorLoadRequest]:
        stmt = self.scoped().where(
            MorLoadRequest.card_id == card_id, MorLoadRequest.status == "PENDING"
        )
        return list((await self.session.execute(stmt.with_for_update())).scalars())
