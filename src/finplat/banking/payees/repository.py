from __future__ import annotations

from datetime import datetime

from sqlalchemy import Select, bindparam, update
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking.payees.models import Payee, PayeeStatus
from finplat.db.repository import CompanyRepository, lock_variants, of_company


class PayeeRepository(CompanyRepository[Payee]):
    model = Payee

    async def find(self, payee_id: str, *, lock: bool = False) -> Payee | None:
        # Locked reads also refresh the object the session may already hold (a re-read after a
        # provider call must see what other requests committed meanwhile).
        found = await self.session.execute(_FIND[lock], self.bound(payee_id=payee_id))
        return found.scalar_one_or_none()

    def listing(self, user_id: int) -> Select[Payee]:
        """The user's payees, newest first, without deleted ones."""
        return (
            self.scoped()
            .where(Payee.user_id == user_id, Payee.status != PayeeStatus.DELETED.value)
            .order_by(Payee.created_at.desc(), Payee.id.desc())
        )


# Every payout's check, initiate and create read their payee: built once.
_FIND = lock_variants(of_company(Payee, Payee.id == bindparam("payee_id")))


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
