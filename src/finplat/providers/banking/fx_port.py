"""The banking provider's FX port: quotes and trades between the currencies of one budget.

A quote fixes a rate and both amounts for a short time (the provider says until when); a
trade executes one quote, at most once, moving the sell amount out of the budget and the buy
amount in. Trades carry the caller's idempotency key: the same key always answers the same
trade, so a call repeated after a lost answer never trades twice, and `trade_by_key` finds
the trade a lost answer was about.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Protocol


class FixedSide(StrEnum):
    """Which amount the customer fixed; the provider computes the other one."""

    SELL = "SELL"
    BUY = "BUY"


class TradeStatus(StrEnum):
    PENDING = "PENDING"  # accepted; the provider settles it later
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"


@dataclass(frozen=True)
class ProviderQuote:
    quote_id: str
    budget_id: str
    sell_currency: str
    buy_currency: str
    sell_amount_minor: int
    buy_amount_minor: int
    rate: Decimal  # buy-currency units for one sell-currency unit, spread included
    fixed_side: FixedSide
    expires_at: datetime


@dataclass(frozen=True)
class ProviderTrade:
    trade_id: str
    quote_id: str
    status: TradeStatus
    sell_currency: str
    buy_currency: str
    sell_amount_minor: int
    buy_amount_minor: int
    rate: Decimal
    executed_at: datetime | None  # set once COMPLETED
    failure_reason: str | None = None


class FxPort(Protocol):
    async def quote(
        self,
        *,
        company_id: int,
        budget_id: str,
        sell_currency: str,
        buy_currency: str,
        amount_minor: int,
        fixed_side: FixedSide,
    ) -> ProviderQuote:
        """Price a conversion inside one budget. `amount_minor` is in the fixed side's
        currency; the other amount is rounded in the provider's favour."""
        ...

    async def execute_trade(
        self, *, company_id: int, quote_id: str, idempotency_key: str
    ) -> ProviderTrade:
        """Execute a quote once. The same key returns the first trade; another key for an
        executed quote, an expired quote or a budget that cannot pay are refused."""
        ...

    async def trade_by_key(self, *, company_id: int, idempotency_key: str) -> ProviderTrade | None:
        """The trade made with this key, with its current status (None: never received)."""
        ...
