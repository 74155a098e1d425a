"""Crypto rails toward the card provider: buying USDC with a banking-provider budget's fiat
and delivering it to the user's USDC deposit address at the card provider
(`bankprov-to-cardprov`), and settling a crypto card load on chain.

Both are asynchronous and keyed: the same key always answers the same rail transfer, so a
repeated call never moves twice. The outcome arrives with the callback `card_transfer.updated`
(data `reference`, `idempotencyKey`, `kind`, `status`, `reason`); `card_transfer_by_key`
finds a transfer whose answer was lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from finplat.providers.crypto.port import ConversionQuote


class RailTransferKind(StrEnum):
    CARDPROV_FUNDING = "CARDPROV_FUNDING"  # fiat from a budget, USDC to the card provider
    CARD_LOAD = "CARD_LOAD"  # stablecoins from custody to the card provider, on one chain


class RailTransferStatus(StrEnum):
    PENDING = "PENDING"  # on its way (on chain: not final yet)
    COMPLETED = "COMPLETED"  # delivered to the card provider (final on chain)
    FAILED = "FAILED"  # nothing was delivered; the money is the customer's again


@dataclass(frozen=True)
class RailTransfer:
    reference: str
    kind: RailTransferKind
    status: RailTransferStatus
    reason: str | None = None


@runtime_checkable
class CardProviderRail(Protocol):
    """A crypto rail that can deliver stablecoins to the card provider."""

    name: str

    async def quote_card_funding(
        self, *, company_id: int, fiat_currency: str, currency: str
    ) -> ConversionQuote:
        """The rate (`currency` units per fiat unit) at which fiat buys the stablecoin."""
        ...

    async def fund_card_provider(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        fiat_currency: str,
        fiat_amount_minor: int,
        source_budget_id: str,
        currency: str,
        amount_minor: int,
        card_reference: str,
    ) -> RailTransfer:
        """Buy `amount_minor` of `currency` with the fiat collected from the budget and send it
        to the card's deposit address at the card provider."""
        ...

    async def send_card_load(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        currency: str,
        chain_id: int,
        amount_minor: int,
        card_reference: str,
    ) -> RailTransfer:
        """Send `amount_minor` of `currency` on `chain_id` from custody to the card provider's
        settlement address for the card; completed once final on chain."""
        ...

    async def card_transfer_by_key(
        self, *, company_id: int, idempotency_key: str
    ) -> RailTransfer | None: ...


@runtime_checkable
class SandboxCardTransferSimulation(Protocol):
    """What only the sandbox rail offers: deciding a transfer toward the card provider."""

    async def settle_card_transfer(
        self, *, company_id: int, reference: str, completed: bool
    ) -> RailTransfer: ...
