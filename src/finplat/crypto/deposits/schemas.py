"""Wire format of crypto deposits and crypto balances."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated

from fastapi import Path
from pydantic import Field

from finplat.crypto.deposits.models import CryptoDeposit, DepositStatus
from finplat.crypto.deposits.service import amount_of
from finplat.crypto.networks import chain_name
from finplat.kit.money import DecimalAmount, from_minor
from finplat.kit.pagination import Page
from finplat.kit.schemas import ResponseModel
from finplat.ledger.service import Balance

DEPOSIT_ID_PATTERN = r"^cdp_[0-9a-f]{24}$"
DepositIdPath = Annotated[
    str, Path(pattern=DEPOSIT_ID_PATTERN, description="The `DepositId` the service returned.")
]
DepositStatusFilter = StrEnum(  # type: ignore[misc]
    "DepositStatusFilter", {s.value: s.value for s in DepositStatus}
)


class DepositResponse(ResponseModel):
    DepositId: str
    UserId: int | None
    Status: DepositStatus = Field(
        description="`PENDING` until the transfer has `RequiredConfirmations`, then "
        "`CREDITED` to the user's crypto balance; `REORGED` when the chain dropped it first "
        "(nothing credited); `UNSUPPORTED` when the token or chain is not the one the "
        "address was issued for (kept for recovery, never credited)."
    )
    CryptoCurrency: str = Field(description="The token as it arrived.")
    Amount: DecimalAmount
    ChainId: int
    Network: str | None = Field(description="The chain's name; null for an unsupported chain.")
    Address: str
    TxHash: str
    Confirmations: int = Field(description="Blocks on top of the transfer so far.")
    RequiredConfirmations: int | None = Field(
        description="The chain's finality threshold; null for an unsupported deposit."
    )
    Reason: str | None
    AutoTopupStatus: str | None = Field(
        description="When the deposit feeds a card's deposit auto top-up: `DUE`, `CONVERTED` "
        "(on its way to the card), `TOPPED_UP`, `SKIPPED` (below the minimum, over the "
        "monthly limit, or the rule switched off) or `FAILED` (refused); the money of a "
        "skipped or failed top-up stays in the crypto balance."
    )
    AutoTopupOrderId: int | None
    CreditedAt: datetime | None
    CreatedAt: datetime
    UpdatedAt: datetime

    @classmethod
    def of(cls, row: CryptoDeposit) -> DepositResponse:
        return cls(
            DepositId=row.id,
            UserId=row.user_id,
            Status=DepositStatus(row.status),
            CryptoCurrency=row.currency,
            Amount=amount_of(row),
            ChainId=row.chain_id,
            Network=chain_name(row.chain_id),
            Address=row.address,
            TxHash=row.tx_hash,
            Confirmations=row.confirmations,
            RequiredConfirmations=row.required_confirmations,
            Reason=row.reason,
            AutoTopupStatus=row.auto_topup_status,
            AutoTopupOrderId=row.auto_topup_order_id,
            CreditedAt=row.credited_at,
            CreatedAt=row.created_at,
            UpdatedAt=row.updated_at,
        )


class DepositPage(Page[DepositResponse]):
    """Deposits, newest first."""


class CryptoBalance(ResponseModel):
    CryptoCurrency: str
    Posted: DecimalAmount
    PendingDebits: DecimalAmount = Field(description="Reserved by flows still in progress.")
    Available: DecimalAmount

    @classmethod
    def of(cls, balance: Balance) -> CryptoBalance:
        return cls(
            CryptoCurrency=balance.currency,
            Posted=from_minor(balance.posted, balance.currency),
            PendingDebits=from_minor(balance.pending_debits, balance.currency),
            Available=from_minor(balance.available, balance.currency),
        )


class CryptoBalances(ResponseModel):
    UserId: int
    Balances: list[CryptoBalance]
