from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.crypto.transfers.models import CryptoTransfer, TransferStatus
from finplat.db.repository import CompanyRepository
from finplat.kit.pagination import PageRequest, PageSlice, fetch_page


class TransferRepository(CompanyRepository[CryptoTransfer]):
    model = CryptoTransfer

    async def find(self, transfer_id: str, *, lock: bool = False) -> CryptoTransfer | None:
        stmt = self.scoped().where(CryptoTransfer.id == transfer_id)
        if lock:
            stmt = stmt.with_for_update().execution_options(populate_existing=True)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def by_provider_key(
        self, provider: str, key: str, *, lock: bool = False
    ) -> CryptoTransfer | None:
        stmt = self.scoped().where(
            CryptoTransfer.provider == provider, CryptoTransfer.provider_key == key
        )
        if lock:
            stmt = stmt.with_for_update().execution_options(populate_existing=True)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def of_user(
        self, user_id: int, *, kinds: list[str], statuses: list[str], page: PageRequest
    ) -> PageSlice[CryptoTransfer]:
        stmt = self.scoped().where(CryptoTransfer.user_id == user_id)
        if kinds:
            stmt = stmt.where(CryptoTransfer.kind.in_(kinds))
        if statuses:
            stmt = stmt.where(CryptoTransfer.status.in_(statuses))
        stmt = stmt.order_by(CryptoTransfer.created_at.desc(), CryptoTransfer.id.desc())
        return await fetch_page(self.session, stmt, page)

    async def pending_ids(self) -> list[str]:
        stmt = (
            select(CryptoTransfer.id)
            .where(
                CryptoTransfer.company_id == self.company_id,
                CryptoTransfer.status == TransferStatus.PENDING.value,
            )
            .order_by(CryptoTransfer.created_at)
        )
        return list((await self.session.execute(stmt)).scalars())


async def companies_with_pending(session: AsyncSession) -> list[int]:
    """Every company with a pending crypto transfer (the reconciliation's system scope)."""
    stmt = (
        select(CryptoTransfer.company_id)
        .where(CryptoTransfer.status == TransferStatus.PENDING.value)
        .distinct()
    )
    return list((await session.execute(stmt)).scalars())
