from __future__ import annotations

from datetime import datetime

from sqlalchemy import Select, update
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking.payees.models import Payee, PayeeStatus
from finplat.db.dialect import for_update
from finplat.db.repository import CompanyRepository


class PayeeRepository(CompanyRepository[Payee]):
    model = Payee

    async def find(self, payee_id: str, *, lock: bool = False) -> Payee | None:
        stmt = self.scoped().where(Payee.id == payee_id)
        if lock:
            # Locked reads also refresh the object the session may already hold (a re-read
            # after a provider call must see what other requests committed meanwhile).
            stmt = for_update(stmt).execution_options(populate_existing=True)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    def listing(self, user_id: int) -> Select[Payee]:
        """The user's payees, newest first, without deleted ones."""
        return (
            self.scoped()
            .where(Payee.user_id == user_id, Payee.status != PayeeStatus.DELETED.value)
            .order_by(Payee.created_at.desc(), Payee.id.desc())
        )


async def expire_unconfirmed(session: AsyncSession, *, now: datetime) -> int:
    """Every company's pending payees whose token expired unconfirmed become `EXPIRED`, and
    their full account details and token hash are wiped (maintenance job)."""
    result = await session.execute(
        update(Payee)
        .where(
            Payee.status == PayeeStatus.PENDING_VERIFICATION.value,
            Payee.token_accepted_at.is_(None),
            Payee.token_expires_at <= now,
        )
        .values(
            status=PayeeStatus.EXPIRED.value,
            pending_details=None,
            token_hash=None,
            updated_at=now,
        )
        .execution_options(synchronize_session=False)
    )
    return int(result.rowcount)  # type: ignore[attr-defined]
