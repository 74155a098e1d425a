from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards.funding.models import CardAutoTopup
from finplat.cards.models import Card
from finplat.crypto.deposits.models import CryptoDeposit
from finplat.db.dialect import insert_ignoring_conflicts
from finplat.db.repository import CompanyRepository
from finplat.kit.pagination import PageRequest, PageSlice, fetch_page


class DepositRepository(CompanyRepository[CryptoDeposit]):
    model = CryptoDeposit

    async def find(self, deposit_id: str) -> CryptoDeposit | None:
        stmt = self.scoped().where(CryptoDeposit.id == deposit_id)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def insert_once(self, values: dict[str, Any]) -> bool:
        """Record a reported transfer unless it is already known (parallel reports of one
        transfer write one row); True when this call wrote it."""
        result = await self.session.execute(
            insert_ignoring_conflicts(self.session, CryptoDeposit).values(
                company_id=self.company_id, **values
            )
        )
        return bool(result.rowcount == 1)  # type: ignore[attr-defined]

    async def by_provider_id(self, provider: str, provider_id: str) -> CryptoDeposit | None:
        stmt = (
            self.scoped()
            .where(
                CryptoDeposit.provider == provider,
                CryptoDeposit.provider_deposit_id == provider_id,
            )
            .execution_options(populate_existing=True)
        )
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def locked_by_provider_id(self, provider: str, provider_id: str) -> CryptoDeposit:
        stmt = (
            self.scoped()
            .where(
                CryptoDeposit.provider == provider,
                CryptoDeposit.provider_deposit_id == provider_id,
            )
            .with_for_update()
            .execution_options(populate_existing=True)
        )
        return (await self.session.execute(stmt)).scalar_one()

    async def of_user(
        self, user_id: int, *, statuses: list[str], page: PageRequest
    ) -> PageSlice[CryptoDeposit]:
        stmt = self.scoped().where(CryptoDeposit.user_id == user_id)
        if statuses:
            stmt = stmt.where(CryptoDeposit.status.in_(statuses))
        stmt = stmt.order_by(CryptoDeposit.created_at.desc(), CryptoDeposit.id.desc())
        return await fetch_page(self.session, stmt, page)

    async def locked(self, deposit_id: str) -> CryptoDeposit | None:
        stmt = (
            self.scoped()
            .where(CryptoDeposit.id == deposit_id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def deposit_rule_card(
        self, *, user_id: int, currency: str, provider: str, rule: str, cancelled: str
    ) -> int | None:
        """The user's first card of `provider` whose `rule` is on for `currency`."""
        stmt = (
            select(Card.id)
            .join(
                CardAutoTopup,
                (CardAutoTopup.card_id == Card.id) & (CardAutoTopup.company_id == Card.company_id),
            )
            .where(
                Card.company_id == self.company_id,
                Card.user_id == user_id,
                Card.provider == provider,
                Card.status != cancelled,
                CardAutoTopup.rule == rule,
                CardAutoTopup.enabled.is_(True),
                CardAutoTopup.deposit_currency == currency,
            )
            .order_by(Card.id)
            .limit(1)
        )
        return (await self.session.execute(stmt)).scalar_one_or_none()


async def topups_due(
    session: AsyncSession, *, statuses: tuple[str, ...], company_id: int | None, limit: int
) -> list[tuple[int, str]]:
    """`(company_id, deposit_id)` of deposits whose auto top-up is not settled yet, every
    company's unless one is named (the background job's query), oldest first."""
    stmt = select(CryptoDeposit.company_id, CryptoDeposit.id).where(
        CryptoDeposit.auto_topup_status.in_(statuses)
    )
    if company_id is not None:
        stmt = stmt.where(CryptoDeposit.company_id == company_id)
    stmt = stmt.order_by(CryptoDeposit.credited_at).limit(limit)
    return [(c, d) for c, d in await session.execute(stmt)]
