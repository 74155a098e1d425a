"""Wire format of exchange quotes and crypto transfers."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Literal

from fastapi import Path
from pydantic import ConfigDict, Field

from finplat.banking.schemas import BudgetIdField
from finplat.crypto.exchange.models import CryptoExchangeQuote, QuoteStatus
from finplat.crypto.transfers.models import CryptoTransfer, TransferKind, TransferStatus
from finplat.kit.money import AmountRange, DecimalAmount, from_minor
from finplat.kit.schemas import RequestModel, ResponseModel

QUOTE_ID_PATTERN = r"^cxq_[0-9a-f]{24}$"
TRANSFER_ID_PATTERN = r"^ctr_[0-9a-f]{24}$"
TransferIdPath = Annotated[
    str, Path(pattern=TRANSFER_ID_PATTERN, description="The `TransferId` the service returned.")
]
MIN_EXCHANGE = Decimal(1)
MAX_EXCHANGE = Decimal(1_000_000)


class ExchangeQuoteRequest(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "CryptoCurrency": "USDC",
                "Amount": 100,
                "FiatCurrency": "EUR",
                "BudgetId": "bud_0123456789abcdef01234567",
            },
            "allOf": [{"properties": {"Amount": {"multipleOf": 0.000001}}}],
        }
    )

    CryptoCurrency: Literal["USDC", "USDT"] = Field(description="The stablecoin sold.")
    Amount: Annotated[DecimalAmount, AmountRange(at_least=MIN_EXCHANGE, at_most=MAX_EXCHANGE)] = (
        Field(description="Stablecoin sold, fee included: 1 to 1000000, at most six decimals.")
    )
    FiatCurrency: Literal["EUR", "GBP", "USD"] = Field(
        description="What the budget receives; the budget must hold it."
    )
    BudgetId: BudgetIdField


class AcceptRequest(RequestModel):
    model_config = ConfigDict(json_schema_extra={"example": {"QuoteId": "cxq_" + "0" * 24}})

    QuoteId: Annotated[str, Field(pattern=QUOTE_ID_PATTERN)] = Field(
        description="An open exchange quote of the user."
    )


class ExchangeQuoteResponse(ResponseModel):
    QuoteId: str
    UserId: int
    Status: QuoteStatus
    CryptoCurrency: str
    Amount: DecimalAmount = Field(description="Stablecoin sold, fee included.")
    Fee: DecimalAmount = Field(
        description="0.5 % of `Amount`, rounded up to the coin's cent, in the stablecoin."
    )
    FiatCurrency: str
    FiatAmount: DecimalAmount = Field(description="What the budget receives.")
    ExchangeRate: str = Field(description="Fiat units for one stablecoin unit, exact.")
    BudgetId: str
    ExpiresAt: datetime
    TransferId: str | None = Field(description="The transfer its acceptance started.")

    @classmethod
    def of(cls, quote: CryptoExchangeQuote) -> ExchangeQuoteResponse:
        return cls(
            QuoteId=quote.id,
            UserId=quote.user_id,
            Status=QuoteStatus(quote.status),
            CryptoCurrency=quote.currency,
            Amount=from_minor(quote.amount_minor, quote.currency),
            Fee=from_minor(quote.fee_minor, quote.currency),
            FiatCurrency=quote.fiat_currency,
            FiatAmount=from_minor(quote.fiat_amount_minor, quote.fiat_currency),
            ExchangeRate=quote.rate,
            BudgetId=quote.budget_id,
            ExpiresAt=quote.expires_at,
            TransferId=quote.transfer_id,
        )


class CryptoTransferResponse(ResponseModel):
    TransferId: str
    UserId: int
    Type: TransferKind
    Status: TransferStatus = Field(
        description="`PENDING` until the rail has decided (a lost answer is never reported "
        "as completed), then `COMPLETED` or `FAILED` (the reserved amount released). A "
        "withdrawal (`Type` `WALLET_WITHDRAWAL`) is first `PENDING_VERIFICATION` until its code "
        "is given and `COOLING_OFF` until its release time for an address the user never sent "
        "to; `EXPIRED` when the code was not given in time (amount and fee released)."
    )
    CryptoCurrency: str
    Amount: DecimalAmount = Field(description="Debited from the crypto balance, fee included.")
    FeeAmount: DecimalAmount
    FeeCurrency: str
    ExchangeRate: str | None
    FiatCurrency: str | None
    FiatAmount: DecimalAmount | None
    BudgetId: str | None
    QuoteId: str | None
    StatusReason: str | None
    CreatedAt: datetime
    UpdatedAt: datetime
    CompletedAt: datetime | None

    @classmethod
    def of(cls, transfer: CryptoTransfer) -> CryptoTransferResponse:
        fiat = transfer.fiat_currency
        return cls(
            TransferId=transfer.id,
            UserId=transfer.user_id,
            Type=TransferKind(transfer.kind),
            Status=TransferStatus(transfer.status),
            CryptoCurrency=transfer.currency,
            Amount=from_minor(transfer.amount_minor, transfer.currency),
            FeeAmount=from_minor(transfer.fee_minor, transfer.currency),
            FeeCurrency=transfer.currency,
            ExchangeRate=transfer.rate,
            FiatCurrency=fiat,
            FiatAmount=(
                from_minor(transfer.fiat_amount_minor, fiat)
                if transfer.fiat_amount_minor is not None and fiat
                else None
            ),
            BudgetId=transfer.budget_id,
            QuoteId=transfer.quote_id,
            StatusReason=transfer.reason,
            CreatedAt=transfer.created_at,
            UpdatedAt=transfer.updated_at,
            CompletedAt=transfer.completed_at,
        )
