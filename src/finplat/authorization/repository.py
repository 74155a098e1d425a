"""All SQL of authorization rules and BIN ranges."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import bindparam, false, func, or_, select, text, true
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.authorization.models import AuthorizationRule
from finplat.cards.transactions.models import CardTransaction
from finplat.db.repository import CompanyRepository
from finplat.tiers.models import CardProduct


class RuleRepository(CompanyRepository[AuthorizationRule]):
    model = AuthorizationRule

    async def all(self) -> list[AuthorizationRule]:
        stmt = self.scoped().order_by(AuthorizationRule.priority, AuthorizationRule.id)
        return list((await self.session.execute(stmt)).scalars())

    async def applicable(
        self, *, card_id: int, user_id: int, provider: str, now: datetime
    ) -> list[AuthorizationRule]:
        """Active, in effect now, scoped to the card: its own rules, its user's and the
        company's of its BIN range (its `provider`'s); in priority order. One statement: the
        range is a subquery."""
        params = {
            "a_company_id": self.company_id,
            "a_card_id": card_id,
            "a_user_id": user_id,
            "a_provider": provider,
            "a_now": now,
        }
        return list((await self.session.execute(_APPLICABLE, params)).scalars())


# The id of the company's BIN range of a provider: its first card product's, as
# `product_providers` orders them and `service.bin_ranges` numbers the ranges (NULL when the
# company has no product of the provider; a provider without a BIN has no range, so no rule
# carries the id of its product).
_BIN_RANGE_ID = (
    select(func.min(CardProduct.id))
    .where(
        CardProduct.company_id == bindparam("a_company_id"),
        CardProduct.provider == bindparam("a_provider"),
    )
    .scalar_subquery()
)
_IN_RANGE = AuthorizationRule.bin_range_id == _BIN_RANGE_ID
_NOW = bindparam("a_now", type_=AuthorizationRule.effective_from.type)
# Every authorization runs it: built once, its execution binds the card, user and time.
_APPLICABLE = (
    select(AuthorizationRule)
    .where(
        AuthorizationRule.company_id == bindparam("a_company_id"),
        AuthorizationRule.active == true(),
        or_(AuthorizationRule.effective_from.is_(None), AuthorizationRule.effective_from <= _NOW),
        or_(AuthorizationRule.effective_to.is_(None), AuthorizationRule.effective_to > _NOW),
        or_(
            (AuthorizationRule.scope_type == "CARD")
            & (AuthorizationRule.card_id == bindparam("a_card_id")),
            (AuthorizationRule.scope_type == "USER")
            & (AuthorizationRule.user_id == bindparam("a_user_id"))
            & _IN_RANGE,
            (AuthorizationRule.scope_type == "COMPANY") & _IN_RANGE,
        ),
    )
    .order_by(AuthorizationRule.priority, AuthorizationRule.id)
)


async def product_providers(session: AsyncSession, *, company_id: int) -> dict[str, list[int]]:
    """The company's card products by provider: `{provider: [CardTypeId, ...]}`, ascending."""
    stmt = (
        select(CardProduct.provider, CardProduct.id)
        .where(CardProduct.company_id == company_id)
        .order_by(CardProduct.id)
    )
    found: dict[str, list[int]] = {}
    for provider, product_id in await session.execute(stmt):
        found.setdefault(provider, []).append(product_id)
    return found


# The advisory lock's first key: finplat's purchases of one user (the second is the user's id).
USER_PURCHASES_LOCK = 0x46505552
_LOCK_USER_PURCHASES = text("SELECT pg_advisory_xact_lock(:namespace, :user_key)")


async def lock_user_purchases(session: AsyncSession, *, user_id: int) -> None:
    """Decide the user's purchases one at a time until this transaction ends. Each card's
    decisions are serialized by the card's row lock; a `USER` velocity rule counts across all
    of the user's cards, so two cards decided at once could both take its last slot.

    On PostgreSQL a transaction-level advisory lock, not the user's row: other paths lock
    users and cards in their own order, and only decisions under a `USER` velocity rule take
    it (after their card's lock, never before). SQLite's single writer serializes already."""
    if session.get_bind().dialect.name != "postgresql":
        return
    # Two users sharing the second key (ids 2^31 apart) only wait for each other.
    params = {"namespace": USER_PURCHASES_LOCK, "user_key": user_id % 2**31}
    await session.execute(_LOCK_USER_PURCHASES, params)


async def approved_since(
    session: AsyncSession,
    *,
    company_id: int,
    since: datetime,
    card_id: int | None = None,
    user_id: int | None = None,
) -> tuple[int, int]:
    """(count, amount in minor units) of the purchases approved since `since`, of one card or
    of one user's cards."""
    stmt = select(
        func.count(CardTransaction.id),
        func.coalesce(
            func.sum(CardTransaction.authorized_minor + CardTransaction.incremented_minor), 0
        ),
    ).where(
        CardTransaction.company_id == company_id,
        CardTransaction.declined == false(),
        CardTransaction.authorized_minor > 0,
        CardTransaction.authorized_at >= since,
    )
    if card_id is not None:
        stmt = stmt.where(CardTransaction.card_id == card_id)
    if user_id is not None:
        stmt = stmt.where(CardTransaction.user_id == user_id)
    count, amount = (await session.execute(stmt)).one()
    return int(count), int(amount)
