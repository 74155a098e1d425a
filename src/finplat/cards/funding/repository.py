"""The SQL of card funding: fundings, fee schedules and auto top-up rules, each read and
written within one company."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, cast

from sqlalchemy import String, Table, bindparam, func, or_, select, update

from finplat.cards.funding.models import CardAutoTopup, CardFeeSchedule, CardFunding
from finplat.db import driver_statements
from finplat.db.dialect import insert_ignoring_conflicts
from finplat.db.repository import CompanyRepository, lock_variants, of_company

_FUNDINGS = cast(Table, CardFunding.__table__)
# Every top-up and unload completes its funding: a Core statement built once, with the
# company filter of its own (the ORM update built per call cost several times as much).
_COMPLETE_IF_PENDING = (
    update(_FUNDINGS)
    .where(
        _FUNDINGS.c.company_id == bindparam("f_company_id"),
        _FUNDINGS.c.id == bindparam("f_id"),
        _FUNDINGS.c.status == bindparam("f_pending"),
    )
    .values(
        status=bindparam("f_completed"),
        completed_at=bindparam("f_now"),
        updated_at=bindparam("f_now"),
        provider_movement_id=func.coalesce(
            bindparam("f_movement_id", type_=String), _FUNDINGS.c.provider_movement_id
        ),
    )
)


class FundingRepository(CompanyRepository[CardFunding]):
    model = CardFunding

    async def one(self, funding_id: int) -> CardFunding:
        stmt = self.scoped().where(CardFunding.id == funding_id)
        return (await self.session.execute(stmt)).scalar_one()

    async def by_provider_key(self, provider_key: str) -> CardFunding | None:
        stmt = self.scoped().where(CardFunding.provider_key == provider_key)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def status_of(self, funding_id: int) -> str:
        """The funding's status as stored now (not as the session last saw it)."""
        stmt = select(CardFunding.status).where(
            CardFunding.company_id == self.company_id, CardFunding.id == funding_id
        )
        return str((await self.session.execute(stmt)).scalar_one())

    async def complete_if_pending(
        self,
        funding_id: int,
        *,
        pending: str,
        completed: str,
        movement_id: str | None,
        now: datetime,
    ) -> bool:
        """Mark a funding still `pending` completed (one statement: the check and the change);
        whether this caller did."""
        params = {
            "f_company_id": self.company_id,
            "f_id": funding_id,
            "f_pending": pending,
            "f_completed": completed,
            "f_now": now,
            "f_movement_id": movement_id,
        }
        connection = await driver_statements.connection_of(self.session)
        return await driver_statements.execute(connection, _COMPLETE_IF_PENDING, params) == 1

    async def take_provider_call(
        self, funding_id: int, *, pending: str, now: datetime, until: datetime
    ) -> bool:
        """Lease the provider call of a funding still `pending` whose lease has run out (or
        was never taken); whether this caller got it."""
        taken = await self.session.execute(
            update(CardFunding)
            .where(
                CardFunding.company_id == self.company_id,
                CardFunding.id == funding_id,
                CardFunding.status == pending,
                or_(
                    CardFunding.provider_call_until.is_(None),
                    CardFunding.provider_call_until <= now,
                ),
            )
            .values(provider_call_until=until)
            .execution_options(synchronize_session=False)
        )
        return bool(getattr(taken, "rowcount", 0))

    async def end_provider_call(self, funding_id: int) -> None:
        await self.session.execute(
            update(CardFunding)
            .where(CardFunding.company_id == self.company_id, CardFunding.id == funding_id)
            .values(provider_call_until=None)
            .execution_options(synchronize_session=False)
        )

    async def of_card_in_status(
        self, card_id: int, status: str, *, created_before: datetime | None = None
    ) -> list[tuple[int, str, int, str]]:
        """`(id, kind, amount_minor, currency)` of the card's fundings in `status`, oldest
        first."""
        stmt = (
            select(CardFunding.id, CardFunding.kind, CardFunding.amount_minor, CardFunding.currency)
            .where(
                CardFunding.company_id == self.company_id,
                CardFunding.card_id == card_id,
                CardFunding.status == status,
                *(() if created_before is None else (CardFunding.created_at < created_before,)),
            )
            .order_by(CardFunding.id)
        )
        return [
            (funding_id, kind, amount_minor, currency)
            for funding_id, kind, amount_minor, currency in await self.session.execute(stmt)
        ]

    async def cards_in_status(self, status: str) -> list[int]:
        """The company's cards with a funding in `status`."""
        stmt = (
            select(CardFunding.card_id)
            .where(CardFunding.company_id == self.company_id, CardFunding.status == status)
            .distinct()
            .order_by(CardFunding.card_id)
        )
        return list((await self.session.execute(stmt)).scalars())

    async def count_of_card(self, card_id: int, *, kind: str, trigger: str) -> int:
        stmt = select(func.count()).where(
            CardFunding.company_id == self.company_id,
            CardFunding.card_id == card_id,
            CardFunding.kind == kind,
            CardFunding.trigger == trigger,
        )
        return int((await self.session.execute(stmt)).scalar_one())

    async def count_and_total_since(
        self, card_id: int, *, kind: str, not_status: str, since: datetime
    ) -> tuple[int, int]:
        """How many fundings of `kind` the card has had since `since` (`not_status` left out),
        and their amounts added up."""
        stmt = select(func.count(), func.coalesce(func.sum(CardFunding.amount_minor), 0)).where(
            CardFunding.company_id == self.company_id,
            CardFunding.card_id == card_id,
            CardFunding.kind == kind,
            CardFunding.status != not_status,
            CardFunding.created_at >= since,
        )
        count, total = (await self.session.execute(stmt)).one()
        return int(count), int(total)


class FeeScheduleRepository(CompanyRepository[CardFeeSchedule]):
    model = CardFeeSchedule

    async def of_tier(self, tier_id: int, *, lock: bool = False) -> CardFeeSchedule | None:
        params = self.bound(tier_id=tier_id)
        return (await self.session.execute(_SCHEDULE_OF_TIER[lock], params)).scalar_one_or_none()

    async def insert_if_missing(
        self, tier_id: int, *, now: datetime, values: Mapping[str, Any]
    ) -> None:
        """The tier's row with `values`, unless it has one already (then it is unchanged)."""
        await self.session.execute(
            insert_ignoring_conflicts(self.session, CardFeeSchedule).values(
                company_id=self.company_id,
                tier_id=tier_id,
                created_at=now,
                updated_at=now,
                **values,
            )
        )


class AutoTopupRepository(CompanyRepository[CardAutoTopup]):
    model = CardAutoTopup

    async def of_card(self, card_id: int) -> list[CardAutoTopup]:
        found = await self.session.execute(_AUTO_TOPUPS_OF_CARD, self.bound(card_id=card_id))
        return list(found.scalars())


# Every top-up and unload reads its tier's fees; every purchase its card's auto top-ups.
_SCHEDULE_OF_TIER = lock_variants(
    of_company(CardFeeSchedule, CardFeeSchedule.tier_id == bindparam("tier_id"))
)
_AUTO_TOPUPS_OF_CARD = of_company(CardAutoTopup, CardAutoTopup.card_id == bindparam("card_id"))
