"""How a reward's amount is computed, and its `Explanation` (pure: no I/O).

Two formulas exist. `FIXED`: a welcome or qualification reward is the level's amount as
configured. `BPS_OF_BASIS`: a top-up reward is the basis (the top-up's fee or its volume, in
minor units) times the level's basis points over 10000, rounded down to the minor unit (in
the platform's favour, as every fee is). `recompute` reads an explanation back to its amount:
it equals the stored amount for every reward (a property test holds it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

BPS_DENOMINATOR = 10_000
FIXED = "FIXED"
BPS_OF_BASIS = "BPS_OF_BASIS"


@dataclass(frozen=True, slots=True)
class Computed:
    amount_minor: int
    explanation: dict[str, Any]


def fixed(amount_minor: int, *, currency: str, level_code: str, rule: str) -> Computed:
    return Computed(
        amount_minor,
        {
            "Formula": FIXED,
            "Rule": rule,
            "LevelCode": level_code,
            "AmountMinor": amount_minor,
            "Currency": currency,
        },
    )


def bps_of_basis(
    basis_minor: int, bps: int, *, currency: str, level_code: str, basis: str
) -> Computed:
    amount = basis_minor * bps // BPS_DENOMINATOR
    return Computed(
        amount,
        {
            "Formula": BPS_OF_BASIS,
            "Basis": basis,
            "BasisMinor": basis_minor,
            "Bps": bps,
            "Rounding": "DOWN",
            "LevelCode": level_code,
            "Currency": currency,
        },
    )


def recompute(explanation: dict[str, Any]) -> int:
    """The amount an explanation describes, in minor units."""
    if explanation["Formula"] == FIXED:
        return int(explanation["AmountMinor"])
    if explanation["Formula"] == BPS_OF_BASIS:
        return int(explanation["BasisMinor"]) * int(explanation["Bps"]) // BPS_DENOMINATOR
    raise ValueError(f"unknown formula {explanation['Formula']!r}")
