"""Wire format of pay-in addresses. The request keeps the spec's lower-case names
(`crypto_currency`, `chain_id`); the response is PascalCase, as the spec's default."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, ConfigDict, Field, StrictInt
from pydantic_core import PydanticCustomError

from finplat.crypto.addresses.models import CryptoPayinAddress
from finplat.crypto.networks import CHAIN_IDS, chain_name
from finplat.kit.schemas import RequestModel, ResponseModel

CryptoCurrency = Literal["USDC", "USDT"]
CHAIN_ID_RULE = "Must be 1 (Ethereum), -200 (Tron), 137 (Polygon) or 42161 (Arbitrum)."


def _supported_chain(value: int) -> int:
    if value not in CHAIN_IDS:
        raise PydanticCustomError("chain_id", CHAIN_ID_RULE)
    return value


# A JSON integer (never `true`, `1.0` or `"1"`), one of the spec's chain ids.
ChainId = Annotated[
    StrictInt,
    AfterValidator(_supported_chain),
    Field(json_schema_extra={"enum": list(CHAIN_IDS)}),
]


class PayinAddressRequest(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={"example": {"crypto_currency": "USDC", "chain_id": 1}}
    )

    crypto_currency: Annotated[CryptoCurrency, Field(description="`USDC` or `USDT`.")]
    chain_id: Annotated[
        ChainId,
        Field(description=CHAIN_ID_RULE),
    ]


class PayinAddressResponse(ResponseModel):
    UserId: int
    Address: str = Field(
        description="EIP-55 checksummed `0x...` on Ethereum, Polygon and Arbitrum; base58check "
        "`T...` on Tron."
    )
    CryptoCurrency: str
    ChainId: int
    Network: str = Field(description="`ETHEREUM`, `TRON`, `POLYGON` or `ARBITRUM`.")
    CreatedAt: datetime

    @classmethod
    def of(cls, row: CryptoPayinAddress) -> PayinAddressResponse:
        return cls(
            UserId=row.user_id,
            Address=row.address,
            CryptoCurrency=row.currency,
            ChainId=row.chain_id,
            Network=chain_name(row.chain_id) or str(row.chain_id),
            CreatedAt=row.created_at,
        )


class PayinAddressList(ResponseModel):
    Addresses: list[PayinAddressResponse]
