from __future__ import annotations

from datetime import datetime

from pydantic import Field

from finplat.kit.money import DecimalAmount
from finplat.kit.schemas import RequestModel, ResponseModel
from finplat.ledger.schemas import BalanceResponse


class FundingRequest(RequestModel):
    model_config = RequestModel.model_config | {
        "json_schema_extra": {"example": {"Currency": "USD", "Amount": 25000.00}}
    }

    Currency: str = Field(
        min_length=3, max_length=4, description="ISO 4217 code, or USDC / USDT.", examples=["USD"]
    )
    Amount: DecimalAmount = Field(description="Major units, at most the currency's decimals.")


class FundingResponse(ResponseModel):
    TransferId: int
    Currency: str
    Amount: DecimalAmount
    Status: str = Field(examples=["COMPLETED"])
    ProviderReference: str
    Balance: BalanceResponse
    CompletedAt: datetime
