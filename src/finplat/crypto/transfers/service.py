"""Reading the crypto transfers of a user (the flows record and settle them)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.crypto.transfers.models import CryptoTransfer
from finplat.crypto.transfers.repository import TransferRepository
from finplat.kit.pagination import PageRequest, PageSlice
from finplat.users import service as users


async def transfers_of(
    session: AsyncSession,
    *,
    company_id: int,
    user_id: int,
    kinds: list[str],
    statuses: list[str],
    page: PageRequest,
) -> PageSlice[CryptoTransfer]:
    """The user's transfers, newest first (404 for a user not the company's)."""
    await users.get_user(session, company_id=company_id, user_id=user_id)
    return await TransferRepository(session, company_id).of_user(
        user_id, kinds=kinds, statuses=statuses, page=page
    )
