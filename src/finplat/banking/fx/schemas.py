"""Wire schemas of quotes and FX trades."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any

from pydantic import ConfigDict, Field, JsonValue

from finplat.banking.fx.models import BankingFxQuote
from finplat.banking.identifiers import QUOTE_ID_PATTERN
from finplat.banking.schemas import AccountIdField, BudgetCurrency, BudgetIdField
from finplat.kit.money import AmountRange, DecimalAmount, exponent, from_minor, schema_number
from finplat.kit.schemas import RequestModel, ResponseModel
from finplat.providers.banking.port import BUDGET_CURRENCIES
from finplat.providers.banking.port import FixedSide as Side
from finplat.providers.names import BankProvider
from finplat.transactions.kinds import TransactionStatus
from finplat.transactions.models import Transaction

# Per trade, in major units of the fixed side's currency. One unit of any budget currency is
# worth more than half a unit of any other, so neither computed amount can round to zero.
MIN_TRADE = Decimal(1)
MAX_TRADE = Decimal(1_000_000)
QUOTE_TEMPORARILY_UNAVAILABLE = "QUOTE_TEMPORARILY_UNAVAILABLE"

QuoteIdField = Annotated[
    str,
    Field(pattern=QUOTE_ID_PATTERN, description="The `QuoteId` a quote response returned."),
]


def _different_currencies() -> list[JsonValue]:
    """One branch per sell currency: the buy currency is any other."""
    return [
        {
            "properties": {
                "SellCurrency": {"const": sell},
                "BuyCurrency": {"enum": [c for c in BUDGET_CURRENCIES if c != sell]},
            }
        }
        for sell in BUDGET_CURRENCIES
    ]


def _precision_of_fixed_side() -> list[JsonValue]:
    """`Amount` has at most the decimals of the fixed side's currency."""
    by_exponent: dict[int, list[JsonValue]] = {}
    for code in BUDGET_CURRENCIES:
        by_exponent.setdefault(exponent(code), []).append(code)
    return [
        {
            "properties": {
                "FixedSide": {"const": side.value},
                field: {"enum": codes},
                "Amount": {"multipleOf": schema_number(Decimal(1).scaleb(-places))},
            }
        }
        for side, field in ((Side.SELL, "SellCurrency"), (Side.BUY, "BuyCurrency"))
        for places, codes in sorted(by_exponent.items())
    ]


class QuoteRequest(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "AccountId": "bp_acc_0123456789abcdef01234567",
                "SellCurrency": "EUR",
                "BuyCurrency": "USD",
                "Amount": 100.0,
                "FixedSide": "SELL",
            },
            "allOf": [
                {"anyOf": _different_currencies()},
                {"anyOf": _precision_of_fixed_side()},
            ],
        }
    )

    AccountId: AccountIdField
    BudgetId: BudgetIdField | None = Field(
        default=None,
        description="The budget to convert in (default: the account's default budget). It "
        "must hold both currencies (409 `CURRENCY_NOT_IN_BUDGET`).",
    )
    SellCurrency: Annotated[BudgetCurrency, Field(strict=False)] = Field(
        description="A closed list: the currencies a budget can hold (EUR, GBP, USD, USDC, "
        "USDT), the only ones a conversion inside a budget can move."
    )
    BuyCurrency: Annotated[BudgetCurrency, Field(strict=False)] = Field(
        description="Any budget currency other than `SellCurrency`."
    )
    Amount: Annotated[DecimalAmount, AmountRange(at_least=MIN_TRADE, at_most=MAX_TRADE)] = Field(
        description="In the currency of the fixed side (`SellCurrency` for `SELL`, "
        "`BuyCurrency` for `BUY`), with at most that currency's decimals."
    )
    FixedSide: Annotated[Side, Field(strict=False)] = Field(
        description="`SELL`: `Amount` is what leaves the budget; `BUY`: what arrives."
    )


class QuoteResponse(ResponseModel):
    IsAvailable: bool = Field(
        description="False when the provider could not quote right now: ask again after "
        "`RetryAfterSeconds`; the quote fields are then null."
    )
    UnavailableReason: str | None = Field(
        description="`QUOTE_TEMPORARILY_UNAVAILABLE` when `IsAvailable` is false."
    )
    RetryAfterSeconds: int | None
    QuoteId: str | None = Field(description="Pass it to trade execution before `ExpiresAt`.")
    AccountId: str
    BudgetId: str
    SellCurrency: str
    BuyCurrency: str
    FixedSide: Side
    SellAmount: DecimalAmount | None
    BuyAmount: DecimalAmount | None
    ExchangeRate: DecimalAmount | None = Field(
        description="`BuyCurrency` units for one `SellCurrency` unit, the spread included."
    )
    ExpiresAt: datetime | None
    Provider: BankProvider

    @classmethod
    def of(cls, quote: BankingFxQuote) -> QuoteResponse:
        return cls(
            IsAvailable=True,
            UnavailableReason=None,
            RetryAfterSeconds=None,
            QuoteId=quote.id,
            AccountId=quote.account_id,
            BudgetId=quote.budget_id,
            SellCurrency=quote.sell_currency,
            BuyCurrency=quote.buy_currency,
            FixedSide=Side(quote.fixed_side),
            SellAmount=from_minor(quote.sell_amount_minor, quote.sell_currency),
            BuyAmount=from_minor(quote.buy_amount_minor, quote.buy_currency),
            ExchangeRate=exchange_rate(quote.rate),
            ExpiresAt=quote.expires_at,
            Provider=BankProvider(quote.provider),
        )

    @classmethod
    def unavailable(
        cls,
        *,
        account_id: str,
        budget_id: str,
        sell_currency: str,
        buy_currency: str,
        fixed_side: Side,
        retry_after: int,
    ) -> QuoteResponse:
        return cls(
            IsAvailable=False,
            UnavailableReason=QUOTE_TEMPORARILY_UNAVAILABLE,
            RetryAfterSeconds=retry_after,
            QuoteId=None,
            AccountId=account_id,
            BudgetId=budget_id,
            SellCurrency=sell_currency,
            BuyCurrency=buy_currency,
            FixedSide=fixed_side,
            SellAmount=None,
            BuyAmount=None,
            ExchangeRate=None,
            ExpiresAt=None,
            Provider=BankProvider.BANKPROV,
        )


def exchange_rate(stored: str) -> Decimal:
    rate = Decimal(stored).normalize()
    return rate.quantize(Decimal(1)) if rate == rate.to_integral_value() else rate


# The spec lists both fields of a trade request as optional; a trade still needs its quote,
# which the document states as a requirement of the object (the property stays optional, as
# the spec has it) and the service answers with 400 `QUOTE_ID_REQUIRED`.
QUOTE_REQUIRED: dict[str, Any] = {
    "anyOf": [{"required": ["QuoteId"], "properties": {"QuoteId": {"type": "string"}}}]
}
OPTIONAL_QUOTE_ID = (
    "The quote to execute. Optional in the spec's shape, but without it there is nothing to "
    "execute: 400 `QUOTE_ID_REQUIRED`."
)


class TradeRequest(RequestModel):
    """`/banking/trades/execute`: the user is named in the query, so `AccountId` may be
    left out (it is then the quote's account, which must be the user's)."""

    model_config = ConfigDict(
        json_schema_extra={
            "example": {"QuoteId": "qt_0123456789abcdef01234567"},
            **QUOTE_REQUIRED,
        }
    )

    QuoteId: QuoteIdField | None = Field(default=None, description=OPTIONAL_QUOTE_ID)
    AccountId: AccountIdField | None = Field(
        default=None, description="When given, it must be the quote's account."
    )


class OrderTradeRequest(RequestModel):
    """`/banking/orders/trade`: `AccountId` is required (the user may not be named)."""

    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "QuoteId": "qt_0123456789abcdef01234567",
                "AccountId": "bp_acc_0123456789abcdef01234567",
            },
            **QUOTE_REQUIRED,
        }
    )

    QuoteId: QuoteIdField | None = Field(default=None, description=OPTIONAL_QUOTE_ID)
    AccountId: AccountIdField = Field(description="The quote's account.")


class TradeResponse(ResponseModel):
    Success: bool = Field(
        description="False only when the provider refused the trade (`Status` `FAILED`)."
    )
    TradeId: str | None = Field(
        description="The provider's trade id; null while the provider's answer is unknown."
    )
    TransactionId: int = Field(
        description="The `FX_TRADE` transaction (`GET /api/v2/transactions/{id}`)."
    )
    QuoteId: str
    Status: TransactionStatus = Field(
        description="`COMPLETED`, or `PENDING` while the provider has not confirmed (the "
        "sell amount stays reserved); never `COMPLETED` before the provider confirms."
    )
    Amount: DecimalAmount = Field(description="What leaves the budget, in `SellCurrency`.")
    SellCurrency: str
    ReceivedAmount: DecimalAmount = Field(description="What arrives, in `BuyCurrency`.")
    BuyCurrency: str
    ExchangeRate: DecimalAmount
    Provider: BankProvider
    ExecutedAt: datetime | None = Field(description="When the provider completed the trade.")
    ErrorMessage: str | None

    @classmethod
    def of(cls, transaction: Transaction, quote: BankingFxQuote) -> TradeResponse:
        status = TransactionStatus(transaction.status)
        return cls(
            Success=status is not TransactionStatus.FAILED,
            TradeId=transaction.provider_reference,
            TransactionId=transaction.id,
            QuoteId=quote.id,
            Status=status,
            Amount=from_minor(quote.sell_amount_minor, quote.sell_currency),
            SellCurrency=quote.sell_currency,
            ReceivedAmount=from_minor(quote.buy_amount_minor, quote.buy_currency),
            BuyCurrency=quote.buy_currency,
            ExchangeRate=exchange_rate(quote.rate),
            Provider=BankProvider(quote.provider),
            ExecutedAt=transaction.completed_at,
            ErrorMessage=transaction.status_reason if status is TransactionStatus.FAILED else None,
        )
