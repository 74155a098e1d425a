"""All SQL of card discount codes."""

from __future__ import annotations

from sqlalchemy import bindparam, delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards.discounts.models import CardDiscount, CardDiscountCode


class DiscountRepository:
    def __init__(self, session: AsyncSession, company_id: int) -> None:
        self.session = session
        self.company_id = company_id

    async def code_named(self, code: str) -> CardDiscountCode | None:
        stmt = select(CardDiscountCode).where(
            CardDiscountCode.company_id == self.company_id, CardDiscountCode.code == code
        )
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def codes(self) -> list[CardDiscountCode]:
        stmt = (
            select(CardDiscountCode)
            .where(CardDiscountCode.company_id == self.company_id)
            .order_by(CardDiscountCode.id)
        )
        return list((await self.session.execute(stmt)).scalars())

    async def add_code(self, row: CardDiscountCode) -> CardDiscountCode:
        self.session.add(row)
        await self.session.flush()
        return row

    async def code_of_card(self, card_id: int) -> CardDiscountCode | None:
        params = {"company_id": self.company_id, "card_id": card_id}
        return (await self.session.execute(_CODE_OF_CARD, params)).scalar_one_or_none()

    async def set_card_code(self, card_id: int, code_id: int | None) -> None:
        await self.session.execute(
            delete(CardDiscount).where(
                CardDiscount.company_id == self.company_id, CardDiscount.card_id == card_id
            )
        )
        if code_id is not None:
            self.session.add(
                CardDiscount(company_id=self.company_id, card_id=card_id, discount_code_id=code_id)
            )
        await self.session.flush()


# Every top-up asks for its card's discount: built once.
_CODE_OF_CARD = (
    select(CardDiscountCode)
    .join(CardDiscount, CardDiscount.discount_code_id == CardDiscountCode.id)
    .where(
        CardDiscount.company_id == bindparam("company_id"),
        CardDiscount.card_id == bindparam("card_id"),
    )
)
