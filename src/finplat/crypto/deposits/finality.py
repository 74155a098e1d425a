"""How many blocks on top of a transfer make it final, per chain.

Defaults: Ethereum 64 (two epochs: a finalized checkpoint), Tron 19 (a solidified block),
Polygon 128, Arbitrum 20. `FINPLAT_CRYPTO_FINALITY_CONFIRMATIONS` overrides any of them. The
application configures this from its settings when it starts; a process that did not (the
standalone worker) reads the environment's.
"""

from __future__ import annotations

from collections.abc import Mapping

from finplat.config import get_settings
from finplat.providers.crypto.port import Chain

DEFAULTS: dict[int, int] = {
    Chain.ETHEREUM.value: 64,
    Chain.TRON.value: 19,
    Chain.POLYGON.value: 128,
    Chain.ARBITRUM.value: 20,
}

_configured: dict[int, int] | None = None


def configure(overrides: Mapping[int, int]) -> None:
    """Use `overrides` over the defaults from now on (each at least one block)."""
    global _configured
    if any(count < 1 for count in overrides.values()):
        raise ValueError("a chain's finality is at least one confirmation")
    _configured = {**DEFAULTS, **overrides}


def thresholds() -> dict[int, int]:
    if _configured is None:
        configure(get_settings().crypto_finality_confirmations)
    assert _configured is not None
    return dict(_configured)


def required_confirmations(chain_id: int) -> int | None:
    """The blocks a transfer on `chain_id` needs; None for a chain the rails do not support."""
    return thresholds().get(chain_id)
