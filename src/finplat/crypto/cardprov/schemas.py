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
CARD_CURRENCY = "USD"
MIN_CARD_AMOUNT = Decimal(1)
MAX_CARD_AMOUNT = Decimal(250_000)  # the card's unload limit


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
    FiatAmount: DecimalAmount = Field(
        description="Taken from the budget (`BANKPROV_TO_CARDPROV`), or paid into it "
        "(`CARDPROV_TO_BANKPROV`)."
    )
    CryptoCurrency: Literal["USDC"]
    CryptoAmount: DecimalAmount = Field(
        description="USDC bought, fee included (`BANKPROV_TO_CARDPROV`); or the USDC the card "
        "provider pays out 1:1 for the unloaded USD less the unload fee, fee included "
        "(`CARDPROV_TO_BANKPROV`)."
    )
    Fee: DecimalAmount = Field(
        description="0.5 % of `CryptoAmount`, rounded up to the coin's cent, in USDC."
    )
    DeliveredAmount: DecimalAmount = Field(
        description="USDC delivered to the card's deposit address at the card provider "
        "(`BANKPROV_TO_CARDPROV`), or sold for `FiatAmount` (`CARDPROV_TO_BANKPROV`)."
    )
    CardAmount: DecimalAmount | None = Field(
        default=None,
        description="`CARDPROV_TO_BANKPROV`: USD unloaded from the card (null otherwise).",
    )
    CardFee: DecimalAmount | None = Field(
        default=None,
        description="`CARDPROV_TO_BANKPROV`: the card's unload fee, USD, part of `CardAmount` "
        "(given back if the conversion fails; null otherwise).",
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
            CardAmount=(
                None
                if quote.card_amount_minor is None
                else from_minor(quote.card_amount_minor, CARD_CURRENCY)
            ),
            CardFee=(
                None
                if quote.card_fee_minor is None
                else from_minor(quote.card_fee_minor, CARD_CURRENCY)
            ),
        )


class CardToBankQuoteRequest(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "CardId": 42,
                "Amount": 100,
                "BudgetId": "bud_0123456789abcdef01234567",
                "FiatCurrency": "EUR",
            },
            "allOf": [{"properties": {"Amount": {"multipleOf": 0.01}}}],
        }
    )

    CardId: BodyId = Field(description="The user's card-provider card (USD) to take it from.")
    Amount: Annotated[
        DecimalAmount, AmountRange(at_least=MIN_CARD_AMOUNT, at_most=MAX_CARD_AMOUNT)
    ] = Field(description="USD unloaded from the card: 1 to 250000, at most two decimals.")
    BudgetId: BudgetIdField
    FiatCurrency: Literal["EUR", "GBP", "USD"] = Field(
        description="What the budget receives; the budget must hold it."
    )


class FundsDecisionResponse(ResponseModel):
    QuoteId: str
    Decision: FundsDecision
    Quote: CardProviderQuoteResponse
    Transfer: CryptoTransferResponse | None = Field(
        description="The transfer an approval started (null when declined)."
    )
