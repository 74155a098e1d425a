"""All SQL of the cards domain."""

from __future__ import annotations

from sqlalchemy import bindparam, exists, select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards.models import Card
from finplat.db.repository import CompanyRepository, lock_variants, of_company
from finplat.users.models import User


class CardRepository(CompanyRepository[Card]):
    model = Card

    async def by_provider_key(self, provider: str, key: str) -> Card | None:
        stmt = self.scoped().where(Card.provider == provider, Card.provider_key == key)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def by_provider_card(
        self, provider: str, provider_card_id: str, *, lock: bool = False
    ) -> Card | None:
        """The card the provider knows as `provider_card_id`; `lock` as in `find`."""
        params = self.bound(provider=provider, provider_card_id=provider_card_id)
        found = await self.session.execute(_BY_PROVIDER_CARD[lock], params)
        return found.scalar_one_or_none()

    async def find(
        self, card_id: int, *, user_id: int | None = None, lock: bool = False
    ) -> Card | None:
        """The company's card, if it exists (and belongs to `user_id` when given).

        With `lock` the row is locked and re-read: a card already in the session may be stale,
        and a locked decision must see what the lock protects.
        """
        if user_id is None:
            found = await self.session.execute(_FIND[lock], self.bound(card_id=card_id))
        else:
            params = self.bound(card_id=card_id, user_id=user_id)
            found = await self.session.execute(_FIND_OF_USER[lock], params)
        return found.scalar_one_or_none()

    async def list_of_user(self, user_id: int) -> list[Card]:
        found = await self.session.execute(_OF_USER, self.bound(user_id=user_id))
        return list(found.scalars())


# Every card operation reads its card: built once, keyed by whether the read locks the row.
_BY_PROVIDER_CARD = lock_variants(
    of_company(
        Card,
        Card.provider == bindparam("provider"),
        Card.provider_card_id == bindparam("provider_card_id"),
    )
)
_FIND = lock_variants(of_company(Card, Card.id == bindparam("card_id")))
_FIND_OF_USER = lock_variants(
    of_company(Card, Card.id == bindparam("card_id"), Card.user_id == bindparam("user_id"))
)
_OF_USER = of_company(Card, Card.user_id == bindparam("user_id")).order_by(Card.id)


async def awaiting_provider_block(session: AsyncSession, *, limit: int) -> list[tuple[int, int]]:
    """`(company_id, card_id)` of the cards whose decline-fee block the provider has not
    confirmed, every company's (the background job's query), oldest first."""
    stmt = (
        select(Card.company_id, Card.id)
        .where(Card.provider_block_pending.is_(True))
        .order_by(Card.id)
        .limit(limit)
    )
    return [(company_id, card_id) for company_id, card_id in await session.execute(stmt)]


async def user_of_another_company(session: AsyncSession, *, company_id: int, user_id: int) -> bool:
    """Whether `user_id` is a user of some other company (Core, outside the tenant guard: only
    the fact is read, never the row)."""
    users = User.__table__
    stmt = select(exists().where(users.c.id == user_id, users.c.company_id != company_id))
    return bool((await session.execute(stmt)).scalar())
