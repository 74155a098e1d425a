from __future__ import annotations

from datetime import datetime

from sqlalchemy import update

from finplat.banking.payouts.models import ApprovalStatus, PayoutApproval
from finplat.db.dialect import for_update
from finplat.db.repository import CompanyRepository
from finplat.transactions.kinds import TransactionType
from finplat.transactions.models import Transaction


class ApprovalRepository(CompanyRepository[PayoutApproval]):
    model = PayoutApproval

    async def find(self, approval_id: str, *, lock: bool = False) -> PayoutApproval | None:
        stmt = self.scoped().where(PayoutApproval.id == approval_id)
        if lock:
            stmt = for_update(stmt).execution_options(populate_existing=True)
        found: PayoutApproval | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found

    async def consume(self, approval_id: str, *, now: datetime) -> bool:
        """Mark a verified, unexpired approval used; only one caller can win."""
        result = await self.session.execute(
            update(PayoutApproval)
            .where(
                PayoutApproval.company_id == self.company_id,
                PayoutApproval.id == approval_id,
                PayoutApproval.status == ApprovalStatus.VERIFIED.value,
                PayoutApproval.expires_at > now,
            )
            .values(status=ApprovalStatus.USED.value, used_at=now, updated_at=now)
            .execution_options(synchronize_session=False)
        )
        return bool(result.rowcount == 1)  # type: ignore[attr-defined]


class PayoutTransactionRepository(CompanyRepository[Transaction]):
    """Payout transactions (`PAYOUT` rows of the transactions table)."""

    model = Transaction

    async def find(
        self, transaction_id: int, *, lock: bool = False, fresh: bool = False
    ) -> Transaction | None:
        """The payout; `lock` locks the row, and a locked or `fresh` read refreshes the object
        the session may already hold (others may have changed the row meanwhile)."""
        stmt = self.scoped().where(
            Transaction.id == transaction_id, Transaction.type == TransactionType.PAYOUT.value
        )
        if lock:
            stmt = for_update(stmt)
        if lock or fresh:
            stmt = stmt.execution_options(populate_existing=True)
        found: Transaction | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found

    async def by_provider_reference(self, provider: str, reference: str) -> Transaction | None:
        stmt = self.scoped().where(
            Transaction.type == TransactionType.PAYOUT.value,
            Transaction.provider == provider,
            Transaction.provider_reference == reference,
        )
        found: Transaction | None = (await self.session.execute(stmt)).scalars().first()
        return found

    async def by_provider_key(self, provider: str, key: str) -> Transaction | None:
        stmt = self.scoped().where(
            Transaction.type == TransactionType.PAYOUT.value,
            Transaction.provider == provider,
            Transaction.provider_key == key,
        )
        found: Transaction | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found
