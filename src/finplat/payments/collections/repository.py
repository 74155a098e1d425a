from __future__ import annotations

from sqlalchemy import func, select

from finplat.db.dialect import for_update
from finplat.db.repository import CompanyRepository
from finplat.payments.collections.models import PaymentCollection
from finplat.transactions.kinds import TransactionStatus, TransactionType
from finplat.transactions.models import Transaction

# A collection that holds or used its mandate: pending (outstanding) or completed.
HOLDING = (TransactionStatus.PENDING.value, TransactionStatus.COMPLETED.value)


class CollectionRepository(CompanyRepository[PaymentCollection]):
    model = PaymentCollection

    async def find(self, collection_id: str) -> PaymentCollection | None:
        stmt = self.scoped().where(PaymentCollection.id == collection_id)
        found: PaymentCollection | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found

    async def by_reference(self, merchant_reference_id: str) -> PaymentCollection | None:
        stmt = self.scoped().where(PaymentCollection.merchant_reference_id == merchant_reference_id)
        found: PaymentCollection | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found

    async def by_transaction(self, transaction_id: int) -> PaymentCollection | None:
        stmt = self.scoped().where(PaymentCollection.transaction_id == transaction_id)
        found: PaymentCollection | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found

    async def holding(self, mandate_id: str) -> int:
        """How many collections of the mandate are pending or completed."""
        stmt = (
            select(func.count())
            .select_from(PaymentCollection)
            .join(Transaction, Transaction.id == PaymentCollection.transaction_id)
            .where(
                PaymentCollection.company_id == self.company_id,
                PaymentCollection.mandate_id == mandate_id,
                Transaction.status.in_(HOLDING),
            )
        )
        return int((await self.session.execute(stmt)).scalar_one())

    async def transaction(
        self, transaction_id: int, *, lock: bool = False, fresh: bool = False
    ) -> Transaction | None:
        """A collection's transaction; a locked or `fresh` read refreshes the object the
        session may hold (a callback or reconciliation may have changed the row)."""
        stmt = select(Transaction).where(
            Transaction.company_id == self.company_id,
            Transaction.id == transaction_id,
            Transaction.type == TransactionType.MANDATE_COLLECTION.value,
        )
        if lock:
            stmt = for_update(stmt)
        if lock or fresh:
            stmt = stmt.execution_options(populate_existing=True)
        found: Transaction | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found
