from __future__ import annotations

from finplat.crypto.transfers.models import CryptoTransfer
from finplat.db.repository import CompanyRepository


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
