"""Card funding wire schemas: top-ups, unloads, the top-up configuration, fee schedules and auto
top-up rules (amounts in USD, the currency of card balances)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any

from pydantic import ConfigDict, Field
from pydantic.config import JsonDict

from finplat.cards.funding import fees
from finplat.cards.funding import service as funding
from finplat.kit.money import AmountRange, DecimalAmount, from_minor
from finplat.kit.schemas import BodyId, RequestModel, ResponseModel


def cents(*names: str) -> JsonDict:
    """Schema: the named amounts have at most two decimals (USD)."""
    return {"allOf": [multiples(0.01, *names)]}


def multiples(step: float, *names: str) -> JsonDict:
    return {"properties": {n: {"multipleOf": step} for n in names}}


def card_id_field() -> Any:
    """`CardId` in a body."""
    return Field(description="The card's local `Id`.")


TopupValue = Annotated[
    DecimalAmount,
    AmountRange(at_least=funding.MIN_TOPUP, at_most=funding.MAX_TOPUP),
    Field(description="5.00 through 250000.00 USD, at most two decimals."),
]


Percent = Annotated[
    DecimalAmount,
    AmountRange(at_least=Decimal(0), at_most=Decimal(100)),
    Field(decimal_places=4, description="0 through 100, at most four decimals."),
]


FeeAmount = Annotated[DecimalAmount, AmountRange(at_least=Decimal(0), at_most=Decimal(10000))]


class CardCurrency(StrEnum):
    USD = "USD"


class TopupRequest(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {"CardId": 1, "Token": "USD", "Value": 100.0},
            **cents("Value"),
        }
    )

    CardId: BodyId = card_id_field()
    Token: Annotated[
        CardCurrency,
        Field(
            strict=False,
            description="The currency code. A closed list, `USD`: the spec says USD is used, "
            "card balances are held in USD and the top-up is drawn from the USD master "
            "account.",
        ),
    ]
    Value: TopupValue


class TopupResponse(ResponseModel):
    Success: bool
    OrderId: int
    Token: str
    Value: DecimalAmount
    Fee: DecimalAmount
    Message: str
    CreatedAt: datetime


class UnloadRequest(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {"CardId": 1, "Currency": "USD", "Value": 20.0},
            **cents("Value"),
        }
    )

    CardId: BodyId = card_id_field()
    Currency: Annotated[
        CardCurrency,
        Field(
            strict=False,
            description="A closed list, `USD`: card balances are held in USD and an unload "
            "returns USD to the master account (money moves in the card's currency only).",
        ),
    ]
    Value: Annotated[DecimalAmount, AmountRange(greater_than=Decimal(0), at_most=funding.MAX_TOPUP)]


class UnloadResponse(ResponseModel):
    Success: bool
    CardId: int
    RequestedAmount: DecimalAmount
    ActualAmount: DecimalAmount
    Fee: DecimalAmount
    NetAmount: DecimalAmount
    Currency: str
    Status: str
    TransactionId: int
    CompletedAt: datetime | None


class TopupConfiguration(ResponseModel):
    Token: str
    Minimum: DecimalAmount
    Maximum: DecimalAmount
    FeePercentage: DecimalAmount
    FixedFee: DecimalAmount


class FeeSchedule(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                multiples(0.01, "TopupFixedFee", "UnloadFixedFee", "DeclineFee"),
                multiples(0.0001, "TopupFeePercentage", "UnloadFeePercentage"),
            ]
        }
    )

    TopupFeePercentage: Percent
    TopupFixedFee: FeeAmount
    UnloadFeePercentage: Percent
    UnloadFixedFee: FeeAmount
    DeclineFee: FeeAmount


class FeeScheduleResponse(ResponseModel):
    TierId: int
    Configured: bool
    Currency: str
    TopupFeePercentage: DecimalAmount
    TopupFixedFee: DecimalAmount
    UnloadFeePercentage: DecimalAmount
    UnloadFixedFee: DecimalAmount
    DeclineFee: DecimalAmount

    @classmethod
    def of(cls, tier_id: int, schedule: fees.FeeSchedule) -> FeeScheduleResponse:
        usd = funding.TOPUP_CURRENCY
        return cls(
            TierId=tier_id,
            Configured=schedule.configured,
            Currency=usd,
            TopupFeePercentage=schedule.topup_percent,
            TopupFixedFee=from_minor(schedule.topup_fixed_minor, usd),
            UnloadFeePercentage=schedule.unload_percent,
            UnloadFixedFee=from_minor(schedule.unload_fixed_minor, usd),
            DeclineFee=from_minor(schedule.decline_fee_minor, usd),
        )


AutoAmount = Annotated[
    DecimalAmount, AmountRange(at_least=funding.MIN_TOPUP, at_most=funding.MAX_TOPUP)
]


LimitAmount = Annotated[DecimalAmount, AmountRange(at_least=Decimal(0), at_most=Decimal(10**7))]


_AUTO_CENTS = cents("Amount", "MonthlyLimit", "Threshold")


class StableCoin(StrEnum):
    USDC = "USDC"
    USDT = "USDT"


class LowBalanceRule(RequestModel):
    model_config = ConfigDict(json_schema_extra=_AUTO_CENTS)

    CardId: BodyId = card_id_field()
    Enabled: bool
    Threshold: LimitAmount
    Amount: AutoAmount
    MonthlyLimit: LimitAmount


class FailedTxRule(RequestModel):
    model_config = ConfigDict(json_schema_extra=_AUTO_CENTS)

    CardId: BodyId = card_id_field()
    Enabled: bool
    Amount: AutoAmount
    MonthlyLimit: LimitAmount


class DepositRule(FailedTxRule):
    Currency: Annotated[StableCoin, Field(strict=False, description="USDC or USDT.")]


class AutoTopupRule(ResponseModel):
    Enabled: bool
    Amount: DecimalAmount
    MonthlyLimit: DecimalAmount
    Threshold: DecimalAmount | None
    Currency: str | None


class AutoTopupUsage(ResponseModel):
    Count: int
    Amount: DecimalAmount
    Currency: str


class AutoTopupSettings(ResponseModel):
    CardId: int
    LowBalance: AutoTopupRule | None
    FailedTransaction: AutoTopupRule | None
    Deposit: AutoTopupRule | None
    CurrentMonth: AutoTopupUsage
