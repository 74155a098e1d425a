"""Crypto rails: deposit (pay-in) addresses for stablecoins on the supported chains, and the
transfers the rail sees arriving at them.

A rail reports each incoming transfer with the callback `deposit.updated` (data: `depositId`,
the rail's stable id of the transfer; `txHash`, `address`, `chainId`, `token`, `amount` as
exact decimal text; `confirmations`, the blocks built on it so far; `status` `SEEN`, or
`DROPPED` once a reorganisation took it off the chain), again whenever that changes. The rail
reports; the platform decides when a transfer is final.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import IntEnum, StrEnum
from typing import Protocol, runtime_checkable


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


class ChainDepositStatus(StrEnum):
    SEEN = "SEEN"  # on the chain, with `confirmations` blocks on top of it
    DROPPED = "DROPPED"  # reorganised away: it is not on the chain any more


@dataclass(frozen=True)
class ChainDeposit:
    deposit_id: str
    tx_hash: str
    address: str
    chain_id: int
    token: str
    amount: str
    confirmations: int
    status: ChainDepositStatus


class ConversionStatus(StrEnum):
    PENDING = "PENDING"  # the rail is selling the coins and paying the fiat out
    COMPLETED = "COMPLETED"  # the fiat was paid to the destination budget
    FAILED = "FAILED"  # nothing was sold; the coins are the customer's again


class CoinSource(StrEnum):
    """Where the coins a conversion sells come from."""

    CUSTODY = "custody"  # the rail's custody of the company's coins (credited deposits)
    CARD_PROVIDER = "card_provider"  # sent by the card provider for the sale, sold on arrival


@dataclass(frozen=True)
class ConversionQuote:
    currency: str  # the stablecoin sold
    fiat_currency: str
    rate: Decimal  # fiat units for one stablecoin unit
    expires_at: datetime


@dataclass(frozen=True)
class Conversion:
    conversion_id: str
    status: ConversionStatus
    reason: str | None = None


class CryptoRail(Protocol):
    """A rail's conversions (`convert`) sell stablecoins for fiat paid to a banking-provider
    budget. They are asynchronous: the outcome arrives as `conversion.updated` (data
    `conversionId`, `idempotencyKey`, `status`, `reason`); the same key always answers the
    same conversion, so a repeated call never sells twice."""

    name: str

    async def deposit_address(
        self, *, company_id: int, reference: str, currency: Stablecoin, chain: Chain
    ) -> DepositAddress:
        """Idempotent: one address per (reference, currency, chain), returned again on repeat."""
        ...

    async def quote_conversion(
        self, *, company_id: int, currency: str, fiat_currency: str
    ) -> ConversionQuote: ...

    async def convert(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        currency: str,
        amount_minor: int,
        fiat_currency: str,
        fiat_amount_minor: int,
        destination_budget_id: str,
        source: CoinSource = CoinSource.CUSTODY,
    ) -> Conversion: ...

    async def conversion_by_key(
        self, *, company_id: int, idempotency_key: str
    ) -> Conversion | None: ...


@runtime_checkable
class SandboxChainSimulation(Protocol):
    """What only the sandbox rail offers: transfers arriving on a chain, blocks, reorgs."""

    async def simulate_deposit(
        self,
        *,
        company_id: int,
        address: str,
        token: str,
        chain_id: int,
        amount: str,
        confirmations: int,
    ) -> ChainDeposit: ...

    async def add_blocks(
        self, *, company_id: int, deposit_id: str, blocks: int
    ) -> ChainDeposit: ...

    async def reorganise(self, *, company_id: int, deposit_id: str) -> ChainDeposit: ...


@runtime_checkable
class SandboxConversionSimulation(Protocol):
    """What only the sandbox rail offers: deciding a conversion."""

    async def settle_conversion(
        self, *, company_id: int, conversion_id: str, completed: bool
    ) -> Conversion: ...
