"""SQL of loyalty, every statement scoped to the caller's company."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.db.dialect import for_update
from finplat.db.repository import CompanyRepository
from finplat.loyalty.models import (
    LoyaltyAward,
    LoyaltyImportConfig,
    LoyaltyMerchant,
    LoyaltyMid,
    LoyaltyProgram,
)
from finplat.users.models import User


class ProgramRepository(CompanyRepository[LoyaltyProgram]):
    model = LoyaltyProgram

    async def all(self) -> Sequence[LoyaltyProgram]:
        stmt = self.scoped().order_by(LoyaltyProgram.id)
        return (await self.session.execute(stmt)).scalars().all()


class MerchantRepository(CompanyRepository[LoyaltyMerchant]):
    model = LoyaltyMerchant

    async def all(self, *, program_id: int | None) -> Sequence[LoyaltyMerchant]:
        stmt = self.scoped().order_by(LoyaltyMerchant.id)
        if program_id is not None:
            stmt = stmt.where(LoyaltyMerchant.program_id == program_id)
        return (await self.session.execute(stmt)).scalars().all()

    async def named(self, ids: Sequence[int]) -> dict[int, LoyaltyMerchant]:
        if not ids:
            return {}
        stmt = self.scoped().where(LoyaltyMerchant.id.in_(ids))
        return {m.id: m for m in (await self.session.execute(stmt)).scalars()}


class MidRepository(CompanyRepository[LoyaltyMid]):
    model = LoyaltyMid

    async def of_merchants(self, merchant_ids: Sequence[int]) -> Sequence[LoyaltyMid]:
        if not merchant_ids:
            return []
        stmt = self.scoped().where(LoyaltyMid.merchant_id.in_(merchant_ids)).order_by(LoyaltyMid.id)
        return (await self.session.execute(stmt)).scalars().all()

    async def by_mid(self, mid: str) -> LoyaltyMid | None:
        stmt = self.scoped().where(LoyaltyMid.mid == mid)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def by_mids(self, mids: Sequence[str]) -> dict[str, LoyaltyMid]:
        if not mids:
            return {}
        stmt = self.scoped().where(LoyaltyMid.mid.in_(mids))
        return {m.mid: m for m in (await self.session.execute(stmt)).scalars()}

    async def remove(self, mid: LoyaltyMid) -> bool:
        stmt = delete(LoyaltyMid).where(
            LoyaltyMid.company_id == self.company_id, LoyaltyMid.id == mid.id
        )
        result: Any = await self.session.execute(stmt)
        return bool(result.rowcount)


class ImportConfigRepository(CompanyRepository[LoyaltyImportConfig]):
    model = LoyaltyImportConfig

    async def all(self) -> Sequence[LoyaltyImportConfig]:
        stmt = self.scoped().order_by(LoyaltyImportConfig.id)
        return (await self.session.execute(stmt)).scalars().all()

    async def locked(self, config_id: int) -> LoyaltyImportConfig | None:
        """The configuration, locked: imports under one configuration run one at a time."""
        stmt = for_update(self.scoped().where(LoyaltyImportConfig.id == config_id))
        stmt = stmt.execution_options(populate_existing=True)
        found: LoyaltyImportConfig | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found


class AwardRepository(CompanyRepository[LoyaltyAward]):
    model = LoyaltyAward

    async def of_card_transaction(self, card_transaction_id: int) -> LoyaltyAward | None:
        stmt = self.scoped().where(LoyaltyAward.card_transaction_id == card_transaction_id)
        stmt = stmt.execution_options(populate_existing=True)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def imported(self, config_id: int, external_ids: Sequence[str]) -> dict[str, str]:
        """The digest of each of these transaction ids already imported under the config."""
        if not external_ids:
            return {}
        stmt = select(LoyaltyAward.external_id, LoyaltyAward.digest).where(
            LoyaltyAward.company_id == self.company_id,
            LoyaltyAward.import_config_id == config_id,
            LoyaltyAward.external_id.in_(external_ids),
        )
        return {str(e): str(d) for e, d in (await self.session.execute(stmt)).all()}

    async def points_by_program(self, user_id: int) -> list[tuple[int, int]]:
        stmt = (
            select(LoyaltyAward.program_id, func.sum(LoyaltyAward.points))
            .where(LoyaltyAward.company_id == self.company_id, LoyaltyAward.user_id == user_id)
            .group_by(LoyaltyAward.program_id)
            .order_by(LoyaltyAward.program_id)
        )
        return [(int(p), int(s or 0)) for p, s in (await self.session.execute(stmt)).all()]

    async def by_location(self, *, since: datetime) -> list[tuple[int, int, int, int]]:
        """Per merchant since `since`: (merchant id, transactions, users, points), counting
        the transactions with something paid."""
        stmt = (
            select(
                LoyaltyAward.merchant_id,
                func.count(LoyaltyAward.id),
                func.count(func.distinct(LoyaltyAward.user_id)),
                func.coalesce(func.sum(LoyaltyAward.points), 0),
            )
            .where(
                LoyaltyAward.company_id == self.company_id,
                LoyaltyAward.occurred_at >= since,
                LoyaltyAward.merchant_id.is_not(None),
                LoyaltyAward.paid_minor > 0,
            )
            .group_by(LoyaltyAward.merchant_id)
        )
        rows = (await self.session.execute(stmt)).all()
        return [(int(m or 0), int(t), int(u), int(p)) for m, t, u, p in rows if m is not None]


async def company_user_ids(session: AsyncSession, company_id: int, ids: Sequence[int]) -> set[int]:
    if not ids:
        return set()
    stmt = select(User.id).where(User.company_id == company_id, User.id.in_(ids))
    return set((await session.execute(stmt)).scalars())
