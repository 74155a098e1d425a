"""SQL for redemptions and the counters they reserve. Every limit is one conditional UPDATE:
it changes the row only while the limit still holds, so parallel redemptions cannot pass it
together (PostgreSQL re-checks the condition on the row as the winner left it)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Select, and_, case, or_, select, update
from sqlalchemy.engine import CursorResult

from finplat.db.dialect import for_update, insert_ignoring_conflicts
from finplat.db.repository import CompanyRepository
from finplat.kit.pagination import PageRequest, PageSlice, fetch_page
from finplat.vouchers.models import Voucher
from finplat.vouchers.redemptions.models import (
    HOLDING,
    RedemptionStatus,
    VoucherRedemption,
    VoucherUserUses,
)
from finplat.vouchers.status import VoucherStatus


def _changed(result: Any) -> bool:
    assert isinstance(result, CursorResult)
    return result.rowcount == 1


def _spent(
    uses: Any = Voucher.successful_uses, redeemed: Any = Voucher.redeemed_value_minor
) -> Any:
    """A voucher none of whose limits lets one more full-value use through, after `uses`
    uses that redeemed `redeemed` (by default: as the row stands)."""
    return or_(
        and_(Voucher.maximum_total_uses.is_not(None), uses >= Voucher.maximum_total_uses),
        and_(
            Voucher.maximum_aggregate_value_minor.is_not(None),
            redeemed + Voucher.value_minor > Voucher.maximum_aggregate_value_minor,
        ),
    )


def _exhausted_after(uses: Any, redeemed: Any) -> Any:
    """The voucher's status once a use brought it to `uses` uses that redeemed `redeemed`, in
    the UPDATE that sets them (whose expressions see the row as it was): `EXHAUSTED` when
    the use spent an active voucher."""
    spent = and_(Voucher.status == VoucherStatus.ACTIVE.value, _spent(uses, redeemed))
    return case((spent, VoucherStatus.EXHAUSTED.value), else_=Voucher.status)


def _active_after(uses: Any, redeemed: Any) -> Any:
    """Likewise once a use given back left `uses` and `redeemed`: `ACTIVE` again when an
    exhausted voucher is no longer spent."""
    freed = and_(Voucher.status == VoucherStatus.EXHAUSTED.value, ~_spent(uses, redeemed))
    return case((freed, VoucherStatus.ACTIVE.value), else_=Voucher.status)


class RedemptionRepository(CompanyRepository[VoucherRedemption]):
    model = VoucherRedemption

    async def find(self, redemption_id: str, *, lock: bool = False) -> VoucherRedemption | None:
        stmt = self.scoped().where(VoucherRedemption.id == redemption_id)
        if lock:
            stmt = for_update(stmt)
        stmt = stmt.execution_options(populate_existing=True)
        found: VoucherRedemption | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found

    async def move(
        self,
        redemption_id: str,
        *,
        from_: Sequence[RedemptionStatus],
        to: RedemptionStatus,
        **values: Any,
    ) -> bool:
        """Change the status if it is still one of `from_`; only one caller can win."""
        result = await self.session.execute(
            update(VoucherRedemption)
            .where(
                VoucherRedemption.company_id == self.company_id,
                VoucherRedemption.id == redemption_id,
                VoucherRedemption.status.in_([s.value for s in from_]),
            )
            .values(status=to.value, **values)
            .execution_options(synchronize_session=False)
        )
        return _changed(result)

    async def count_failed_attempt(self, redemption_id: str) -> None:
        await self.session.execute(
            update(VoucherRedemption)
            .where(
                VoucherRedemption.company_id == self.company_id,
                VoucherRedemption.id == redemption_id,
            )
            .values(failed_attempts=VoucherRedemption.failed_attempts + 1)
            .execution_options(synchronize_session=False)
        )

    async def expired_holding(self, voucher_id: str, *, now: datetime) -> list[str]:
        stmt = select(VoucherRedemption.id).where(
            VoucherRedemption.company_id == self.company_id,
            VoucherRedemption.voucher_id == voucher_id,
            VoucherRedemption.status == RedemptionStatus.PENDING_VERIFICATION.value,
            VoucherRedemption.expires_at <= now,
        )
        return list((await self.session.execute(stmt)).scalars())

    async def page(
        self,
        request: PageRequest,
        *,
        created_from: datetime | None,
        created_to: datetime | None,
        status: str | None,
        currency: str | None,
    ) -> PageSlice[VoucherRedemption]:
        stmt: Select[VoucherRedemption] = self.scoped().order_by(
            VoucherRedemption.created_at, VoucherRedemption.id
        )
        if created_from is not None:
            stmt = stmt.where(VoucherRedemption.created_at >= created_from)
        if created_to is not None:
            stmt = stmt.where(VoucherRedemption.created_at < created_to)
        if status is not None:
            stmt = stmt.where(VoucherRedemption.status == status)
        if currency is not None:
            stmt = stmt.where(VoucherRedemption.currency == currency)
        return await fetch_page(self.session, stmt, request)


async def expired_waiting(session: Any, *, now: datetime, limit: int) -> list[tuple[int, str]]:
    """(company, redemption) of redemptions whose code was not verified in time, across
    companies (the maintenance job's system scope)."""
    stmt = (
        select(VoucherRedemption.company_id, VoucherRedemption.id)
        .where(
            VoucherRedemption.status == RedemptionStatus.PENDING_VERIFICATION.value,
            VoucherRedemption.expires_at <= now,
        )
        .order_by(VoucherRedemption.expires_at)
        .limit(limit)
    )
    return [(int(c), str(r)) for c, r in (await session.execute(stmt)).all()]


class VoucherCounters:
    """The conditional UPDATEs of a voucher's and a user's counters. Every change takes the
    user's row before the voucher's, so parallel redemptions never wait on each other in a
    circle."""

    def __init__(self, repository: RedemptionRepository) -> None:
        self.session = repository.session
        self.company_id = repository.company_id

    def _voucher(self, voucher_id: str) -> Any:
        return update(Voucher).where(
            Voucher.company_id == self.company_id, Voucher.id == voucher_id
        )

    def _user(self, voucher_id: str, user_id: int) -> Any:
        return update(VoucherUserUses).where(
            VoucherUserUses.company_id == self.company_id,
            VoucherUserUses.voucher_id == voucher_id,
            VoucherUserUses.user_id == user_id,
        )

    async def reserve_for_user(self, voucher_id: str, user_id: int, limit: int | None) -> bool:
        """One more reservation of the user's, while their uses and reservations stay under
        `limit`."""
        await self.session.execute(
            insert_ignoring_conflicts(self.session, VoucherUserUses).values(
                company_id=self.company_id,
                voucher_id=voucher_id,
                user_id=user_id,
                uses=0,
                reserved=0,
            )
        )
        stmt = self._user(voucher_id, user_id)
        if limit is not None:
            stmt = stmt.where(VoucherUserUses.uses + VoucherUserUses.reserved < limit)
        result = await self.session.execute(
            stmt.values(reserved=VoucherUserUses.reserved + 1).execution_options(
                synchronize_session=False
            )
        )
        return _changed(result)

    async def reserve(self, voucher_id: str, value_minor: int) -> bool:
        """One use and its value reserved, while the total uses and the aggregate value
        (counting what others hold) stay within the voucher's limits."""
        result = await self.session.execute(
            self._voucher(voucher_id)
            .where(
                Voucher.status == VoucherStatus.ACTIVE.value,
                or_(
                    Voucher.maximum_total_uses.is_(None),
                    Voucher.successful_uses + Voucher.reserved_uses < Voucher.maximum_total_uses,
                ),
                or_(
                    Voucher.maximum_aggregate_value_minor.is_(None),
                    Voucher.redeemed_value_minor + Voucher.reserved_value_minor + value_minor
                    <= Voucher.maximum_aggregate_value_minor,
                ),
            )
            .values(
                reserved_uses=Voucher.reserved_uses + 1,
                reserved_value_minor=Voucher.reserved_value_minor + value_minor,
            )
            .execution_options(synchronize_session=False)
        )
        return _changed(result)

    async def release(self, voucher_id: str, user_id: int, value_minor: int) -> None:
        # The user's row before the voucher's, the order a start takes them in: the other
        # order deadlocks against parallel starts.
        await self.session.execute(
            self._user(voucher_id, user_id)
            .values(reserved=VoucherUserUses.reserved - 1)
            .execution_options(synchronize_session=False)
        )
        await self.session.execute(
            self._voucher(voucher_id)
            .values(
                reserved_uses=Voucher.reserved_uses - 1,
                reserved_value_minor=Voucher.reserved_value_minor - value_minor,
            )
            .execution_options(synchronize_session=False)
        )

    async def use(self, voucher_id: str, user_id: int, value_minor: int) -> None:
        """The reservation becomes a use; a voucher it spends is `EXHAUSTED` (the user's row
        first, as everywhere)."""
        await self.session.execute(
            self._user(voucher_id, user_id)
            .values(reserved=VoucherUserUses.reserved - 1, uses=VoucherUserUses.uses + 1)
            .execution_options(synchronize_session=False)
        )
        uses = Voucher.successful_uses + 1
        redeemed = Voucher.redeemed_value_minor + value_minor
        await self.session.execute(
            self._voucher(voucher_id)
            .values(
                reserved_uses=Voucher.reserved_uses - 1,
                reserved_value_minor=Voucher.reserved_value_minor - value_minor,
                successful_uses=uses,
                redeemed_value_minor=redeemed,
                status=_exhausted_after(uses, redeemed),
            )
            .execution_options(synchronize_session=False)
        )

    async def unuse(self, voucher_id: str, user_id: int, value_minor: int) -> None:
        """A use whose card credit failed is given back (and the voucher with it)."""
        await self.session.execute(
            self._user(voucher_id, user_id)
            .values(uses=VoucherUserUses.uses - 1)
            .execution_options(synchronize_session=False)
        )
        uses = Voucher.successful_uses - 1
        redeemed = Voucher.redeemed_value_minor - value_minor
        await self.session.execute(
            self._voucher(voucher_id)
            .values(
                successful_uses=uses,
                redeemed_value_minor=redeemed,
                status=_active_after(uses, redeemed),
            )
            .execution_options(synchronize_session=False)
        )

    async def user_uses(self, voucher_id: str, user_id: int) -> int:
        stmt = select(VoucherUserUses.uses).where(
            VoucherUserUses.company_id == self.company_id,
            VoucherUserUses.voucher_id == voucher_id,
            VoucherUserUses.user_id == user_id,
        )
        return int((await self.session.execute(stmt)).scalar_one_or_none() or 0)


__all__ = ["HOLDING", "RedemptionRepository", "VoucherCounters"]
