from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.db.repository import CompanyRepository
from finplat.transactions.kinds import TransactionStatus
from finplat.transactions.models import Transaction


class TransactionRepository(CompanyRepository[Transaction]):
    model = Transaction

    async def by_provider_key(self, provider: str, key: str) -> Transaction | None:
        stmt = self.scoped().where(
            Transaction.provider == provider, Transaction.provider_key == key
        )
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def by_provider_reference(self, provider: str, reference: str) -> Transaction | None:
        stmt = self.scoped().where(
            Transaction.provider == provider, Transaction.provider_reference == reference
        )
        return (await self.session.execute(stmt)).scalars().first()

    def listing(
        self,
        *,
        user_id: int | None,
        types: Sequence[str] = (),
        statuses: Sequence[str] = (),
    ) -> Select[Transaction]:
        stmt = self.scoped()
        if user_id is not None:
            stmt = stmt.where(Transaction.user_id == user_id)
        if types:
            stmt = stmt.where(Transaction.type.in_(list(types)))
        if statuses:
            stmt = stmt.where(Transaction.status.in_(list(statuses)))
        return stmt.order_by(Transaction.id.desc())

    async def pending_ids(self) -> list[int]:
        """The company's pending transactions, oldest first."""
        stmt = (
            select(Transaction.id)
            .where(
                Transaction.company_id == self.company_id,
                Transaction.status == TransactionStatus.PENDING.value,
            )
            .order_by(Transaction.id)
        )
        return [int(i) for i in (await self.session.execute(stmt)).scalars()]


async def companies_with_pending(session: AsyncSession) -> list[int]:
    """Every company that has a pending transaction (system scope: reconciliation)."""
    stmt = (
        select(Transaction.company_id)
        .where(Transaction.status == TransactionStatus.PENDING.value)
        .distinct()
        .order_by(Transaction.company_id)
    )
    return [int(i) for i in (await session.execute(stmt)).scalars()]
