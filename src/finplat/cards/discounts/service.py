"""Discount codes on cards (spec: "Discount code update"; the effect is finplat's design,
docs/decisions.md "Discount codes on cards (issue 35)").

A company defines codes, each a percentage off the top-up fee valid within an optional window
[`ValidFrom`, `ValidUntil`); a card carries at most one. The discount is rounded **down** to
the minor unit, so the fee charged is rounded in the platform's favour as every fee is.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_DOWN, Decimal

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards.discounts.models import CardDiscountCode
from finplat.cards.discounts.repository import DiscountRepository
from finplat.cards.lookup import find_card
from finplat.errors import ApiError, NotFound
from finplat.events import service as events
from finplat.kit.clock import utcnow


class DiscountCodeNotFound(NotFound):
    code = "DISCOUNT_CODE_NOT_FOUND"
    message = "No discount code with that name in this company."


class DiscountCodeExists(ApiError):
    status = 409
    code = "DISCOUNT_CODE_EXISTS"
    message = "The company already has a discount code with that name."


@dataclass(frozen=True)
class Discount:
    percent_off: Decimal
    valid_from: datetime | None
    valid_until: datetime | None

    def in_effect(self, at: datetime) -> bool:
        return (self.valid_from is None or _aware(self.valid_from) <= at) and (
            self.valid_until is None or at < _aware(self.valid_until)
        )

    def applied_to(self, fee_minor: int, at: datetime | None = None) -> int:
        """The fee after the discount: the amount off is rounded down, never below 0."""
        if not self.in_effect(at or utcnow()):
            return fee_minor
        off = (Decimal(fee_minor) * self.percent_off / 100).to_integral_value(ROUND_DOWN)
        return max(0, fee_minor - int(off))


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def discount_of(row: CardDiscountCode) -> Discount:
    return Discount(Decimal(row.percent_off), row.valid_from, row.valid_until)


async def discounted_topup_fee(
    session: AsyncSession, *, company_id: int, card_id: int, fee_minor: int
) -> int:
    """The top-up fee of the card after its discount code, if it carries one in effect."""
    row = await DiscountRepository(session, company_id).code_of_card(card_id)
    return fee_minor if row is None else discount_of(row).applied_to(fee_minor)


async def create_code(
    session: AsyncSession,
    *,
    company_id: int,
    code: str,
    percent_off: Decimal,
    valid_from: datetime | None,
    valid_until: datetime | None,
) -> CardDiscountCode:
    repo = DiscountRepository(session, company_id)
    if await repo.code_named(code) is not None:
        raise DiscountCodeExists()
    try:
        async with session.begin_nested():
            row = await repo.add_code(
                CardDiscountCode(
                    company_id=company_id,
                    code=code,
                    percent_off=format(percent_off, "f"),
                    valid_from=valid_from,
                    valid_until=valid_until,
                )
            )
    except IntegrityError:  # a concurrent create of the same name
        raise DiscountCodeExists() from None
    return row


async def list_codes(session: AsyncSession, *, company_id: int) -> list[CardDiscountCode]:
    return await DiscountRepository(session, company_id).codes()


async def set_card_code(
    session: AsyncSession, *, company_id: int, card_id: int, code: str | None
) -> CardDiscountCode | None:
    """Sets the card's discount code (`None` clears it). Another company's card, or a code
    the company has not defined: 404."""
    await find_card(session, company_id=company_id, card_id=card_id, lock=True)
    repo = DiscountRepository(session, company_id)
    row = None
    if code is not None:
        row = await repo.code_named(code)
        if row is None:
            raise DiscountCodeNotFound()
    await repo.set_card_code(card_id, None if row is None else row.id)
    await events.record(
        session,
        company_id=company_id,
        type_="card.discount_code.updated",
        domain="card",
        data={"CardId": card_id, "DiscountCode": code},
    )
    return row
