"""Wire format of card analytics."""

from __future__ import annotations

from datetime import date

from pydantic import Field

from finplat.kit.money import DecimalAmount, from_minor
from finplat.kit.schemas import ResponseModel
from finplat.mor.analytics.repository import MorSpendPeriod, Spend

SPENT = "What cleared less what was refunded, in the currency's major units."


class MorSpendBucket(ResponseModel):
    Start: date = Field(description="The period's first day (UTC).")
    Currency: str
    Spent: DecimalAmount = Field(description=SPENT)
    Purchases: int = Field(description="Cleared purchases first seen in the period.")

    @classmethod
    def of(cls, spend: Spend) -> MorSpendBucket:
        return cls(
            Start=date.fromisoformat(str(spend.key)),
            Currency=spend.currency,
            Spent=from_minor(spend.spent_minor, spend.currency),
            Purchases=spend.purchases,
        )


class MorSpendByPeriod(ResponseModel):
    Period: MorSpendPeriod
    Buckets: list[MorSpendBucket] = Field(
        description="Oldest first, per currency; periods without a purchase are left out."
    )


class MorSpendByCategory(ResponseModel):
    Mcc: str | None = Field(description="The merchant category code; null when not sent.")
    Currency: str
    Spent: DecimalAmount = Field(description=SPENT)
    Purchases: int

    @classmethod
    def of(cls, spend: Spend) -> MorSpendByCategory:
        return cls(
            Mcc=None if spend.key is None else str(spend.key),
            Currency=spend.currency,
            Spent=from_minor(spend.spent_minor, spend.currency),
            Purchases=spend.purchases,
        )


class MorSpendByCategoryPage(ResponseModel):
    Items: list[MorSpendByCategory] = Field(description="Most spent first.")
    Page: int
    PageSize: int
    HasMore: bool


class MorSpendByCardholder(ResponseModel):
    UserId: int = Field(description="The cardholder (a user of the merchant).")
    Currency: str
    Spent: DecimalAmount = Field(description=SPENT)
    Purchases: int

    @classmethod
    def of(cls, spend: Spend) -> MorSpendByCardholder:
        return cls(
            UserId=int(spend.key or 0),
            Currency=spend.currency,
            Spent=from_minor(spend.spent_minor, spend.currency),
            Purchases=spend.purchases,
        )


class MorSpendByCardholderPage(ResponseModel):
    Items: list[MorSpendByCardholder] = Field(description="Most spent first.")
    Page: int
    PageSize: int
    HasMore: bool
