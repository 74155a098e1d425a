"""Crypto rails: withdrawals of a user's stablecoins to an external wallet.

A withdrawal is signed and broadcast by the rail once per idempotency key: a repeated call
with the same key answers the first withdrawal and never broadcasts again. It is `BROADCAST`
(sent, with its `txHash`) until the chain confirms it (`CONFIRMED`) or it cannot be sent or is
reverted (`FAILED`, nothing left the rail). Changes arrive as `withdrawal.updated` (data
`withdrawalId`, `idempotencyKey`, `status`, `txHash`, `reason`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable


class WithdrawalStatus(StrEnum):
    BROADCAST = "BROADCAST"  # on its way: in the mempool or in a block not yet final
    CONFIRMED = "CONFIRMED"  # final on the chain: the destination has the coins
    FAILED = "FAILED"  # not sent, or reverted: nothing left the rail


@dataclass(frozen=True)
class Withdrawal:
    withdrawal_id: str
    status: WithdrawalStatus
    tx_hash: str | None = None
    reason: str | None = None


@runtime_checkable
class WalletWithdrawals(Protocol):
    """What a rail that sends stablecoins to external wallets offers."""

    async def network_fee(self, *, company_id: int, currency: str, chain_id: int) -> int:
        """The fee, in the coin's minor units, the rail charges to send on that chain."""
        ...

    async def withdraw(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        currency: str,
        chain_id: int,
        address: str,
        amount_minor: int,
    ) -> Withdrawal:
        """Broadcast once per key; a repeated key answers the first withdrawal."""
        ...

    async def withdrawal_by_key(
        self, *, company_id: int, idempotency_key: str
    ) -> Withdrawal | None: ...


@runtime_checkable
class SandboxWithdrawalSimulation(Protocol):
    """What only the sandbox rail offers: the chain deciding a broadcast withdrawal."""

    async def settle_withdrawal(
        self, *, company_id: int, withdrawal_id: str, confirmed: bool
    ) -> Withdrawal: ...
