"""Wire shapes of card discount codes (PascalCase, as the spec's)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated

from pydantic import Field

from finplat.cards.discounts.models import CardDiscountCode
from finplat.kit.fields import SafeText
from finplat.kit.money import AmountRange, DecimalAmount
from finplat.kit.schemas import RequestModel, ResponseModel
from finplat.vouchers.instants import Instant

PercentOff = Annotated[
    DecimalAmount,
    AmountRange(greater_than=Decimal(0), at_most=Decimal(100)),
    Field(
        decimal_places=2,
        json_schema_extra={"multipleOf": 0.01},
        description="Percentage off the card's top-up fee, above 0 through 100, at most two "
        "decimals (the amount off rounds down).",
    ),
]
CodeText = Annotated[SafeText, Field(min_length=1, max_length=64)]


class DiscountCodeUpdate(RequestModel):
    """Spec: "Discount code update"."""

    DiscountCode: CodeText | None = Field(
        default=None,
        description="A discount code the company defined; null or absent clears the card's.",
    )


class DiscountCodeCreate(RequestModel):
    Code: CodeText
    PercentOff: PercentOff
    ValidFrom: Instant | None = None
    ValidUntil: Instant | None = Field(
        default=None,
        description="The end of the window, not included; a window that ends at or before "
        "`ValidFrom` never applies.",
    )


class DiscountCodeResponse(ResponseModel):
    Code: str
    PercentOff: DecimalAmount
    ValidFrom: datetime | None
    ValidUntil: datetime | None
    CreatedAt: datetime

    @classmethod
    def of(cls, row: CardDiscountCode) -> DiscountCodeResponse:
        return cls(
            Code=row.code,
            PercentOff=Decimal(row.percent_off),
            ValidFrom=row.valid_from,
            ValidUntil=row.valid_until,
            CreatedAt=row.created_at,
        )


class CardDiscountResponse(ResponseModel):
    CardId: int
    DiscountCode: str | None
