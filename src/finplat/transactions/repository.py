from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Select

from finplat.db.repository import CompanyRepository
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
