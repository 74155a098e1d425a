"""Finding a card: the company's, or one user's, with the 404s (and the spec's one 401) the API
answers when it is not there."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards.errors import CardNotFound, UserOfAnotherCompany
from finplat.cards.models import Card
from finplat.cards.repository import CardRepository, user_of_another_company
from finplat.errors import NotFound
from finplat.users import service as users


async def find_card(
    session: AsyncSession,
    *,
    company_id: int,
    card_id: int,
    user_id: int | None = None,
    lock: bool = False,
) -> Card:
    """The company's card (the user's, when `user_id` is given); 404 `CARD_NOT_FOUND` else,
    or `USER_NOT_FOUND` when the given user is unknown."""
    card = await CardRepository(session, company_id).find(card_id, user_id=user_id, lock=lock)
    if card is None:
        if user_id is not None:
            await users.get_user(session, company_id=company_id, user_id=user_id)
        raise CardNotFound()
    return card


async def user_card(
    session: AsyncSession,
    *,
    company_id: int,
    user_id: int,
    card_id: int,
    lock: bool = False,
    outsider_401: bool = False,
) -> Card:
    """The user's card: 404 for a missing user or card. With `outsider_401` (card detail,
    per spec), a user of another company is 401 instead."""
    try:
        await users.get_user(session, company_id=company_id, user_id=user_id)
    except NotFound:
        if outsider_401 and await user_of_another_company(
            session, company_id=company_id, user_id=user_id
        ):
            raise UserOfAnotherCompany() from None
        raise
    return await find_card(
        session, company_id=company_id, card_id=card_id, user_id=user_id, lock=lock
    )
