"""Wire format of card-provider quotes and their funds decisions."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from finplat.banking.schemas import BudgetIdField
from finplat.crypto.cardprov.models import CardProviderQuote, CardQuoteStatus
from finplat.crypto.cardprov.models import Direction as FlowDirection
from finplat.crypto.exchange.schemas import CryptoTransferResponse
from finplat.kit.money import AmountRange, DecimalAmount, from_minor
from finplat.kit.schemas import BodyId, RequestModel, ResponseModel

QUOTE_ID_PATTERN = r"^cpq_[0-9a-f]{24}$"
MIN_FIAT = Decimal(1)
MAX_FIAT = Decimal(1_000_000)


class CardProviderQuoteRequest(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "BudgetId": "bud_0123456789abcdef01234567",
                "FiatCurrency": "EUR",
                "Amount": 100,
                "CardId": 42,
            },
            "allOf": [{"properties": {"Amount": {"multipleOf": 0.01}}}],
        }
    )

    BudgetId: BudgetIdField
    FiatCurrency: Literal["EUR", "GBP", "USD"] = Field(
        description="What leaves the budget; the budget must hold it."
    )
    Amount: Annotated[DecimalAmount, AmountRange(at_least=MIN_FIAT, at_most=MAX_FIAT)] = Field(
        description="Fiat taken from the budget: 1 to 1000000, at most two decimals."
    )
    CardId: BodyId = Field(
        description="The user's card-provider card whose USDC deposit address receives it."
    )


class FundsDecision(StrEnum):
    APPROVE = "APPROVE"
    DECLINE = "DECLINE"


class QuoteIdRequest(RequestModel):
    model_config = ConfigDict(json_schema_extra={"example": {"QuoteId": "cpq_" + "0" * 24}})

    QuoteId: Annotated[str, Field(pattern=QUOTE_ID_PATTERN)] = Field(
        description="An open card-provider quote of the user."
    )


class FundsDecisionRequest(QuoteIdRequest):
    model_config = ConfigDict(
        json_schema_extra={"example": {"QuoteId": "cpq_" + "0" * 24, "Decision": "APPROVE"}}
    )

    Decision: Annotated[FundsDecision, Field(strict=False)] = Field(
        description="`APPROVE` moves the funds at the quote's terms; `DECLINE` closes the "
        "quote and moves nothing."
    )


class CardProviderQuoteResponse(ResponseModel):
    QuoteId: str
    UserId: int
    Direction: FlowDirection
    Status: CardQuoteStatus
    BudgetId: str
    CardId: int
    FiatCurrency: str
    FiatAmount: DecimalAmount = Field(description="Taken from the budget.")
    CryptoCurrency: Literal["USDC"]
    CryptoAmount: DecimalAmount = Field(description="USDC bought, fee included.")
    Fee: DecimalAmount = Field(
        description="0.5 % of `CryptoAmount`, rounded up to the coin's cent, in USDC."
    )
    DeliveredAmount: DecimalAmount = Field(
        description="USDC delivered to the card's deposit address at the card provider."
    )
    ExchangeRate: str = Field(description="USDC for one unit of `FiatCurrency`, exact.")
    ExpiresAt: datetime
    TransferId: str | None = Field(description="The transfer its approval started.")

    @classmethod
    def of(cls, quote: CardProviderQuote) -> CardProviderQuoteResponse:
        return cls(
            QuoteId=quote.id,
            UserId=quote.user_id,
            Direction=FlowDirection(quote.direction),
            Status=CardQuoteStatus(quote.status),
            BudgetId=quote.budget_id,
            CardId=quote.card_id,
            FiatCurrency=quote.fiat_currency,
            FiatAmount=from_minor(quote.fiat_amount_minor, quote.fiat_currency),
            CryptoCurrency="USDC",
            CryptoAmount=from_minor(quote.amount_minor, quote.currency),
            Fee=from_minor(quote.fee_minor, quote.currency),
            DeliveredAmount=from_minor(quote.amount_minor - quote.fee_minor, quote.currency),
            ExchangeRate=quote.rate,
            ExpiresAt=quote.expires_at,
            TransferId=quote.transfer_id,
        )


class FundsDecisionResponse(ResponseModel):
    QuoteId: str
    Decision: FundsDecision
    Quote: CardProviderQuoteResponse
    Transfer: CryptoTransferResponse | None = Field(
        description="The transfer an approval started (null when declined)."
    )
