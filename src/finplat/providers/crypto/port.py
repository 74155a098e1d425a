"""Crypto rails: deposit (pay-in) addresses for stablecoins on the supported chains."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Protocol


class Stablecoin(StrEnum):
    USDC = "USDC"
    USDT = "USDT"


class Chain(IntEnum):
    """The spec's payin chain ids."""

    ETHEREUM = 1
    TRON = -200
    POLYGON = 137
    ARBITRUM = 42161


@dataclass(frozen=True)
class DepositAddress:
    address: str
    currency: Stablecoin
    chain: Chain


class CryptoRail(Protocol):
    name: str

    async def deposit_address(
        self, *, company_id: int, reference: str, currency: Stablecoin, chain: Chain
    ) -> DepositAddress:
        """Idempotent: one address per (reference, currency, chain), returned again on repeat."""
        ...
