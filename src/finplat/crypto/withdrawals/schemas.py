"""Wire format of wallet withdrawals (`bankprov-to-wallet/initiate` and `/confirm`)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated

from pydantic import ConfigDict, Field

from finplat.crypto.addresses.schemas import CHAIN_ID_RULE, ChainId, CryptoCurrency
from finplat.crypto.exchange.schemas import TRANSFER_ID_PATTERN
from finplat.crypto.networks import chain_name
from finplat.crypto.transfers.models import TransferKind, TransferStatus
from finplat.crypto.withdrawals.service import MAX_ATTEMPTS, WalletWithdrawal
from finplat.kit.money import AmountRange, DecimalAmount, from_minor
from finplat.kit.schemas import RequestModel, ResponseModel

MIN_WITHDRAWAL = Decimal(1)
MAX_WITHDRAWAL = Decimal(1_000_000)


class InitiateWithdrawalRequest(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "CryptoCurrency": "USDC",
                "ChainId": 1,
                "Amount": 100,
                "DestinationAddress": "0x52908400098527886E0F7030069857D2E4169EE7",
            },
            "allOf": [{"properties": {"Amount": {"multipleOf": 0.000001}}}],
        }
    )

    CryptoCurrency: Annotated[CryptoCurrency, Field(description="`USDC` or `USDT`.")]
    ChainId: Annotated[ChainId, Field(description=CHAIN_ID_RULE)]
    Amount: Annotated[
        DecimalAmount, AmountRange(at_least=MIN_WITHDRAWAL, at_most=MAX_WITHDRAWAL)
    ] = Field(
        description="What the destination receives: 1 to 1000000, at most six decimals. The "
        "network fee comes on top."
    )
    DestinationAddress: Annotated[str, Field(min_length=1, max_length=64)] = Field(
        description="The external wallet: an EIP-55 `0x...` address on Ethereum, Polygon and "
        "Arbitrum (all lower or upper case is taken too), a base58check `T...` on Tron."
    )


class ConfirmWithdrawalRequest(RequestModel):
    TransferId: Annotated[str, Field(pattern=TRANSFER_ID_PATTERN)] = Field(
        examples=["ctr_" + "0" * 24], description="The withdrawal `initiate` answered."
    )
    # A field example, as the vouchers' verify: a body example would show a code-shaped value.
    Code: Annotated[str, Field(pattern=r"^\s*[0-9]{6}\s*$")] = Field(
        examples=["000000"], description="The six-digit code emailed to the user."
    )


class WalletWithdrawalResponse(ResponseModel):
    TransferId: str
    UserId: int
    Type: TransferKind
    Status: TransferStatus = Field(
        description="`PENDING_VERIFICATION` until the code is given; `COOLING_OFF` until "
        "`ReleaseAt` for an address the user never sent to; `PENDING` once handed to the rail "
        "(a lost answer is never reported as completed); then `COMPLETED`, or `FAILED` / "
        "`EXPIRED` with the amount and fee released."
    )
    CryptoCurrency: str
    ChainId: int
    Network: str
    DestinationAddress: str = Field(description="In the chain's canonical spelling.")
    Amount: DecimalAmount = Field(description="What the destination receives.")
    NetworkFee: DecimalAmount = Field(description="The rail's fee for the chain, in the coin.")
    TotalAmount: DecimalAmount = Field(description="Debited from the crypto balance.")
    CodeExpiresAt: datetime
    AttemptsLeft: int = Field(description="Wrong codes still allowed before it locks.")
    ReleaseAt: datetime | None = Field(description="The end of a cooling-off.")
    TxHash: str | None
    StatusReason: str | None
    CreatedAt: datetime
    UpdatedAt: datetime
    CompletedAt: datetime | None

    @classmethod
    def of(cls, found: WalletWithdrawal) -> WalletWithdrawalResponse:
        transfer, withdrawal = found.transfer, found.withdrawal
        coin = transfer.currency
        return cls(
            TransferId=transfer.id,
            UserId=transfer.user_id,
            Type=TransferKind(transfer.kind),
            Status=TransferStatus(transfer.status),
            CryptoCurrency=coin,
            ChainId=withdrawal.chain_id,
            Network=chain_name(withdrawal.chain_id) or str(withdrawal.chain_id),
            DestinationAddress=withdrawal.address,
            Amount=from_minor(transfer.amount_minor - transfer.fee_minor, coin),
            NetworkFee=from_minor(transfer.fee_minor, coin),
            TotalAmount=from_minor(transfer.amount_minor, coin),
            CodeExpiresAt=withdrawal.code_expires_at,
            AttemptsLeft=max(MAX_ATTEMPTS - withdrawal.failed_attempts, 0),
            ReleaseAt=withdrawal.release_at,
            TxHash=withdrawal.tx_hash,
            StatusReason=transfer.reason,
            CreatedAt=transfer.created_at,
            UpdatedAt=transfer.updated_at,
            CompletedAt=transfer.completed_at,
        )
