"""Reading vouchers: a company's, a page at a time, never with their codes."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.kit.pagination import PageRequest, PageSlice
from finplat.vouchers.models import Voucher
from finplat.vouchers.repository import VoucherRepository


async def list_vouchers(
    session: AsyncSession, *, company_id: int, page: PageRequest, group_id: str | None
) -> PageSlice[Voucher]:
    """The company's vouchers, oldest first (optionally one group's)."""
    return await VoucherRepository(session, company_id).page(page, group_id=group_id)
