"""The stablecoins and chains of the crypto rails (spec, Limits: payin currencies USDC and
USDT; chain ids 1 Ethereum, -200 Tron, 137 Polygon, 42161 Arbitrum; 6 decimals)."""

from __future__ import annotations

from finplat.providers.crypto.port import Chain, Stablecoin

CURRENCIES: tuple[str, ...] = tuple(c.value for c in Stablecoin)
CHAIN_IDS: tuple[int, ...] = tuple(c.value for c in Chain)
CHAIN_NAMES: dict[int, str] = {c.value: c.name for c in Chain}


def chain_name(chain_id: int) -> str | None:
    """The network's name for a supported chain id; None for any other chain."""
    return CHAIN_NAMES.get(chain_id)
