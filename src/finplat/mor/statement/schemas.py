"""Wire format of the MOR merchant's transaction listing."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from finplat.kit.money import DecimalAmount, from_minor
from finplat.kit.schemas import ResponseModel
from finplat.mor.statement.kinds import DIRECTIONS, MorTransactionType, MorWalletDirection
from finplat.mor.statement.repository import StatementRow


class MorTransaction(ResponseModel):
    Type: MorTransactionType
    ReferenceId: int = Field(
        description="The id of what moved, by `Type`: the ledger transfer of a company "
        "funding, the card funding (`OrderId` / `TransactionId`) of a top-up, unload or "
        "decline fee, the child funding's `Id`, the card transaction's `Id` of a purchase."
    )
    WalletDirection: MorWalletDirection | None = Field(
        description="How the wallet moved: `CREDIT`, `DEBIT`, or null when only a card moved "
        "(a purchase, a decline fee)."
    )
    Currency: str
    Amount: DecimalAmount = Field(
        description="What moved the wallet (a top-up's amount with its fee; an unload's less "
        "its fee); for a purchase, what cleared less refunds, or while not cleared what was "
        "authorized and not reversed; for a decline fee, the fee."
    )
    Fee: DecimalAmount
    Status: str
    CardId: int | None
    UserId: int | None
    CreatedAt: datetime

    @classmethod
    def of(cls, row: StatementRow) -> MorTransaction:
        return cls(
            Type=row.type,
            ReferenceId=row.reference_id,
            WalletDirection=DIRECTIONS[row.type],
            Currency=row.currency,
            Amount=from_minor(row.amount_minor, row.currency),
            Fee=from_minor(row.fee_minor, row.currency),
            Status=row.status,
            CardId=row.card_id,
            UserId=row.user_id,
            CreatedAt=row.created_at,
        )


class MorTransactionPage(ResponseModel):
    Items: list[MorTransaction]
    Page: int
    PageSize: int
    HasMore: bool
