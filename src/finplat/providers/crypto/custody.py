"""Crypto rails: what the rail holds in custody for a company, per stablecoin.

The read is the rail's own account of the coins at the addresses it keeps for the company
(the users' pay-in addresses and whatever the company keeps there), from its own records: the
transfers it saw arrive, less the coins it sold and the coins it sent away. A movement counts
once it is final at the rail (a sale completed, a withdrawal or a transfer to the card provider
final on chain); one still on its way is still held. Reconciliation compares it with the
ledger (`finplat.reconciliation.crypto_custody`).
"""

from __future__ import annotations

from decimal import ROUND_DOWN, Decimal, InvalidOperation
from typing import Protocol, runtime_checkable

COIN_EXPONENT = 6  # USDC and USDT


@runtime_checkable
class CustodyBalances(Protocol):
    """A rail that can say what it holds for a company (a port of its own, so rails without
    it are reported unchecked rather than failing)."""

    async def custody_balances(self, *, company_id: int) -> dict[str, int]:
        """Coins held for the company, by stablecoin, in the coin's minor units (6 decimals).
        A coin the rail never held for the company may be absent (it holds 0)."""
        ...


def coin_minor(amount: str) -> int | None:
    """An on-chain amount (exact decimal text) in the coin's minor units, rounded down (the
    rail's books keep six decimals); None when it is not a number."""
    try:
        value = Decimal(amount)
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None
    return int((value * 10**COIN_EXPONENT).to_integral_value(rounding=ROUND_DOWN))
