from __future__ import annotations

from datetime import datetime

from sqlalchemy import and_, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.crypto.transfers.models import CryptoTransfer, TransferStatus
from finplat.crypto.withdrawals.models import CryptoWalletWithdrawal
from finplat.db.repository import CompanyRepository

# A destination is "used before" once a withdrawal to it was sent to the rail.
SENT = (TransferStatus.PENDING.value, TransferStatus.COMPLETED.value)


class WithdrawalRepository(CompanyRepository[CryptoWalletWithdrawal]):
    model = CryptoWalletWithdrawal

    async def find(self, transfer_id: str, *, lock: bool = False) -> CryptoWalletWithdrawal | None:
        stmt = self.scoped().where(CryptoWalletWithdrawal.transfer_id == transfer_id)
        if lock:
            stmt = stmt.with_for_update()
        stmt = stmt.execution_options(populate_existing=True)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def count_failed_attempt(self, transfer_id: str) -> None:
        await self.session.execute(
            update(CryptoWalletWithdrawal)
            .where(
                CryptoWalletWithdrawal.company_id == self.company_id,
                CryptoWalletWithdrawal.transfer_id == transfer_id,
            )
            .values(failed_attempts=CryptoWalletWithdrawal.failed_attempts + 1)
            .execution_options(synchronize_session=False)
        )

    async def destination_used(
        self, *, user_id: int, chain_id: int, address: str, other_than: str
    ) -> bool:
        """Whether the user already sent a withdrawal to this address on this chain."""
        stmt = (
            select(CryptoWalletWithdrawal.transfer_id)
            .join(CryptoTransfer, CryptoTransfer.id == CryptoWalletWithdrawal.transfer_id)
            .where(
                CryptoWalletWithdrawal.company_id == self.company_id,
                CryptoWalletWithdrawal.user_id == user_id,
                CryptoWalletWithdrawal.chain_id == chain_id,
                CryptoWalletWithdrawal.address == address,
                CryptoWalletWithdrawal.transfer_id != other_than,
                CryptoTransfer.status.in_(SENT),
            )
            .limit(1)
        )
        return (await self.session.execute(stmt)).first() is not None


async def due(session: AsyncSession, *, now: datetime, limit: int) -> list[tuple[int, str]]:
    """(company, transfer) of every withdrawal whose code expired unused or whose cooling-off
    is over (the job's system scope)."""
    stmt = (
        select(CryptoWalletWithdrawal.company_id, CryptoWalletWithdrawal.transfer_id)
        .join(CryptoTransfer, CryptoTransfer.id == CryptoWalletWithdrawal.transfer_id)
        .where(
            or_(
                and_(
                    CryptoTransfer.status == TransferStatus.PENDING_VERIFICATION.value,
                    CryptoWalletWithdrawal.code_expires_at <= now,
                ),
                and_(
                    CryptoTransfer.status == TransferStatus.COOLING_OFF.value,
                    CryptoWalletWithdrawal.release_at <= now,
                ),
            )
        )
        .limit(limit)
    )
    return [(int(c), str(t)) for c, t in (await session.execute(stmt)).all()]
