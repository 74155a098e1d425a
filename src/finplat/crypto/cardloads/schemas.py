"""Wire format of crypto card loads. The request keeps the spec's lower-case
`crypto_currency` and `chain_id` (as `payin-address`); the rest is PascalCase."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import Path
from pydantic import ConfigDict, Field

from finplat.cards.funding.schemas import TopupValue, card_id_field
from finplat.crypto.addresses.schemas import CHAIN_ID_RULE, ChainId, CryptoCurrency
from finplat.crypto.cardloads.models import CardLoadStatus, CryptoCardLoad
from finplat.crypto.cardloads.service import CARD_CURRENCY
from finplat.crypto.networks import chain_name
from finplat.kit.money import DecimalAmount, from_minor
from finplat.kit.schemas import BodyId, RequestModel, ResponseModel

LOAD_ID_PATTERN = r"^ccl_[0-9a-f]{24}$"
LoadIdPath = Annotated[
    str, Path(pattern=LOAD_ID_PATTERN, description="The `LoadId` the service returned.")
]


class CryptoCardLoadRequest(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {"CardId": 42, "Amount": 50, "crypto_currency": "USDC", "chain_id": 137},
            "allOf": [{"properties": {"Amount": {"multipleOf": 0.01}}}],
        }
    )

    CardId: BodyId = card_id_field()
    Amount: TopupValue
    crypto_currency: Annotated[
        CryptoCurrency, Field(description="`USDC` or `USDT`: the settlement currency, paid 1:1.")
    ]
    chain_id: Annotated[ChainId, Field(description=CHAIN_ID_RULE)]


class CryptoCardLoadResponse(ResponseModel):
    LoadId: str
    UserId: int
    CardId: int
    Status: CardLoadStatus = Field(
        description="`PENDING` on chain, `CONFIRMED` final on chain with the card's credit "
        "due, `COMPLETED` credited (`OrderId`), or `FAILED` (`StatusReason`; the coins are "
        "back in the crypto balance)."
    )
    Amount: DecimalAmount = Field(description="USD loaded onto the card (before its top-up fee).")
    Currency: str = Field(description="The card's currency, USD.")
    CryptoCurrency: str
    CryptoAmount: DecimalAmount = Field(description="Taken from the crypto balance, 1:1.")
    ChainId: int
    Network: str
    OrderId: int | None = Field(description="The card top-up that credited the load.")
    StatusReason: str | None
    CreatedAt: datetime
    UpdatedAt: datetime
    ConfirmedAt: datetime | None
    CompletedAt: datetime | None

    @classmethod
    def of(cls, load: CryptoCardLoad) -> CryptoCardLoadResponse:
        return cls(
            LoadId=load.id,
            UserId=load.user_id,
            CardId=load.card_id,
            Status=CardLoadStatus(load.status),
            Amount=from_minor(load.load_minor, CARD_CURRENCY),
            Currency=CARD_CURRENCY,
            CryptoCurrency=load.currency,
            CryptoAmount=from_minor(load.amount_minor, load.currency),
            ChainId=load.chain_id,
            Network=chain_name(load.chain_id) or str(load.chain_id),
            OrderId=load.funding_id,
            StatusReason=load.reason,
            CreatedAt=load.created_at,
            UpdatedAt=load.updated_at,
            ConfirmedAt=load.confirmed_at,
            CompletedAt=load.completed_at,
        )
