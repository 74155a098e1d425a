"""The MOR merchant's transaction listing.

Rules: every row is the merchant's own (its company's records; as a child, the fundings its
parent sent it; as a parent, those it sent); newest first; `cardId` and `userId` must be the
merchant's (404 otherwise, as everywhere) and keep only the rows of that card or user, so the
wallet's own fundings drop out of such a list.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards import lookup
from finplat.mor.statement import repository
from finplat.mor.statement.repository import StatementFilter, StatementRow
from finplat.users import service as users


async def page(
    session: AsyncSession, *, company_id: int, where: StatementFilter, offset: int, limit: int
) -> list[StatementRow]:
    if where.user_id is not None:
        await users.get_user(session, company_id=company_id, user_id=where.user_id)
    if where.card_id is not None:
        await lookup.find_card(session, company_id=company_id, card_id=where.card_id)
    return await repository.page(
        session, company_id=company_id, where=where, offset=offset, limit=limit
    )
