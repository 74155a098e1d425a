from __future__ import annotations

from pydantic import Field

from finplat.kit.money import DecimalAmount, from_minor
from finplat.kit.schemas import ResponseModel
from finplat.ledger.service import Balance


class BalanceResponse(ResponseModel):
    Currency: str
    Posted: DecimalAmount = Field(description="Settled funds, including those reserved.")
    PendingDebits: DecimalAmount = Field(description="Reserved for operations in progress.")
    PendingCredits: DecimalAmount = Field(
        description="Announced incoming funds, not yet spendable."
    )
    Available: DecimalAmount = Field(description="Posted minus pending debits: what can be spent.")

    @classmethod
    def of(cls, balance: Balance) -> BalanceResponse:
        currency = balance.currency
        return cls(
            Currency=currency,
            Posted=from_minor(balance.posted, currency),
            PendingDebits=from_minor(balance.pending_debits, currency),
            PendingCredits=from_minor(balance.pending_credits, currency),
            Available=from_minor(balance.available, currency),
        )
