from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.db.dialect import for_update
from finplat.db.repository import CompanyRepository
from finplat.kit.pagination import PageRequest, PageSlice, fetch_page
from finplat.payments.requests.models import PaymentRequest, PaymentRequestStatus


class PaymentRequestRepository(CompanyRepository[PaymentRequest]):
    model = PaymentRequest

    async def find(
        self, request_id: str, *, lock: bool = False, fresh: bool = False
    ) -> PaymentRequest | None:
        """The request; a locked or `fresh` read refreshes the object the session may already
        hold (a provider callback may have changed the row meanwhile)."""
        stmt = self.scoped().where(PaymentRequest.id == request_id)
        if lock:
            stmt = for_update(stmt)
        if lock or fresh:
            stmt = stmt.execution_options(populate_existing=True)
        found: PaymentRequest | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found

    async def by_provider_request(
        self, provider: str, provider_request_id: str, *, lock: bool = False
    ) -> PaymentRequest | None:
        stmt = self.scoped().where(
            PaymentRequest.provider == provider,
            PaymentRequest.provider_request_id == provider_request_id,
        )
        if lock:
            stmt = for_update(stmt).execution_options(populate_existing=True)
        found: PaymentRequest | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found

    async def page(
        self,
        request: PageRequest,
        *,
        user_id: int | None,
        status: PaymentRequestStatus | None,
        budget_id: str | None,
    ) -> PageSlice[PaymentRequest]:
        stmt = self.scoped()
        if user_id is not None:
            stmt = stmt.where(PaymentRequest.user_id == user_id)
        if status is not None:
            stmt = stmt.where(PaymentRequest.status == status.value)
        if budget_id is not None:
            stmt = stmt.where(PaymentRequest.budget_id == budget_id)
        stmt = stmt.order_by(PaymentRequest.created_at.desc(), PaymentRequest.id.desc())
        return await fetch_page(self.session, stmt, request)


async def due_for_expiry(
    session: AsyncSession, *, now: datetime, limit: int, company_id: int | None
) -> Sequence[tuple[int, str]]:
    """(company id, request id) of pending requests past their expiry: of one company, or of
    all (`company_id` None: the maintenance job's system scope)."""
    stmt = (
        select(PaymentRequest.company_id, PaymentRequest.id)
        .where(
            PaymentRequest.status == PaymentRequestStatus.PENDING.value,
            PaymentRequest.expires_at <= now,
        )
        .order_by(PaymentRequest.expires_at)
        .limit(limit)
    )
    if company_id is not None:
        stmt = stmt.where(PaymentRequest.company_id == company_id)
    return [(company_id, request_id) for company_id, request_id in await session.execute(stmt)]


async def companies_with_pending(session: AsyncSession) -> list[int]:
    """Companies with a pending request (system scope: reconciliation)."""
    stmt = (
        select(PaymentRequest.company_id)
        .where(PaymentRequest.status == PaymentRequestStatus.PENDING.value)
        .distinct()
    )
    return [company_id for (company_id,) in await session.execute(stmt)]


async def pending_ids(session: AsyncSession, *, company_id: int) -> list[str]:
    stmt = select(PaymentRequest.id).where(
        PaymentRequest.company_id == company_id,
        PaymentRequest.status == PaymentRequestStatus.PENDING.value,
    )
    return [request_id for (request_id,) in await session.execute(stmt)]
