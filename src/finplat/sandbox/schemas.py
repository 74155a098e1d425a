from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Annotated

from pydantic import ConfigDict, Field

from finplat.kit.money import CURRENCY_CODES, AmountRange, DecimalAmount, precision_by_currency
from finplat.kit.schemas import RequestModel, ResponseModel
from finplat.ledger.schemas import BalanceResponse
from finplat.sandbox.funding import MAX_FUNDING


class FundedAccount(StrEnum):
    """The company accounts a sandbox funding can credit."""

    MASTER = "MASTER"  # pays card top-ups and payouts
    VOUCHERS = "VOUCHERS"  # pays redeemed vouchers
    REWARDS = "REWARDS"  # pays referral rewards


class FundingRequest(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {"Currency": "USD", "Amount": 25000.00},
            # The decimals an amount may have depend on its currency.
            "anyOf": precision_by_currency("Currency", "Amount"),
        }
    )

    Currency: str = Field(
        description="ISO 4217 code, or USDC / USDT.",
        examples=["USD"],
        json_schema_extra={"enum": list(CURRENCY_CODES)},
    )
    Amount: Annotated[DecimalAmount, AmountRange(greater_than=Decimal(0), at_most=MAX_FUNDING)] = (
        Field(
            description="Major units with at most the currency's decimals (2 for most, 0 for JPY "
            "and the like, 3 for KWD and the like, 6 for USDC and USDT).",
        )
    )
    Account: Annotated[FundedAccount, Field(strict=False)] = Field(
        default=FundedAccount.MASTER,
        description="The company account credited: `MASTER` (the default; pays top-ups and "
        "payouts), `VOUCHERS` (pays redeemed vouchers) or `REWARDS` (pays referral rewards).",
    )


class FundingResponse(ResponseModel):
    TransferId: int
    Currency: str
    Amount: DecimalAmount
    Status: str = Field(examples=["COMPLETED"])
    ProviderReference: str
    Balance: BalanceResponse
    CompletedAt: datetime
