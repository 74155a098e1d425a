from __future__ import annotations

from datetime import datetime

from sqlalchemy import bindparam, update

from finplat.banking.payouts.models import ApprovalStatus, PayoutApproval
from finplat.db.repository import CompanyRepository, lock_variants, locked, of_company
from finplat.transactions.kinds import TransactionType
from finplat.transactions.models import Transaction


class ApprovalRepository(CompanyRepository[PayoutApproval]):
    model = PayoutApproval

    async def find(self, approval_id: str, *, lock: bool = False) -> PayoutApproval | None:
        rows = await self.session.execute(_APPROVAL[lock], self.bound(approval_id=approval_id))
        found: PayoutApproval | None = rows.scalar_one_or_none()
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
        stmt = _PAYOUT_LOCKED if lock else _PAYOUT_FRESH if fresh else _PAYOUT
        rows = await self.session.execute(stmt, self.bound(transaction_id=transaction_id))
        found: Transaction | None = rows.scalar_one_or_none()
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


# A payout's create reads its approval and settles its payout under a lock: built once.
_APPROVAL = lock_variants(of_company(PayoutApproval, PayoutApproval.id == bindparam("approval_id")))
_PAYOUT = of_company(
    Transaction,
    Transaction.id == bindparam("transaction_id"),
    Transaction.type == TransactionType.PAYOUT.value,
)
_PAYOUT_LOCKED = locked(_PAYOUT)
_PAYOUT_FRESH = _PAYOUT.execution_options(populate_existing=True)
