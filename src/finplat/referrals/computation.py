"""How a reward's amount is computed, and its `Explanation` (pure: no I/O).

Two formulas exist. `FIXED`: a welcome or qualification reward is the level's amount as
configured. `BPS_OF_BASIS`: a top-up reward is the basis (the top-up's fee or its volume, in
minor units) times the level's basis points over 10000, rounded down to the minor unit (in
the platform's favour, as every fee is). `recompute` reads an explanation back to its amount:
it equals the stored amount for every reward (a property test holds it). A multiplier
boost's award (`BOOST_MULTIPLIER`) is the boosted reward times (multiplier - 1), rounded down,
at most the boost's cap.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_DOWN, Decimal
from typing import Any

BPS_DENOMINATOR = 10_000
FIXED = "FIXED"
BPS_OF_BASIS = "BPS_OF_BASIS"
BOOST_MULTIPLIER = "BOOST_MULTIPLIER"


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


def boost_multiplier(
    base_minor: int,
    multiplier: str,
    maximum_incremental_minor: int | None,
    *,
    currency: str,
    level_code: str,
    boost_id: str,
    policy_hash: str,
) -> Computed:
    """A multiplier boost's extra on a reward of `base_minor`: base x (multiplier - 1),
    rounded down, capped."""
    return Computed(
        _boosted(base_minor, multiplier, maximum_incremental_minor),
        {
            "Formula": BOOST_MULTIPLIER,
            "BaseAmountMinor": base_minor,
            "Multiplier": multiplier,
            "MaximumIncrementalMinor": maximum_incremental_minor,
            "Rounding": "DOWN",
            "LevelCode": level_code,
            "Currency": currency,
            "BoostId": boost_id,
            "PolicyHash": policy_hash,
        },
    )


def _boosted(base_minor: int, multiplier: str, cap: int | None) -> int:
    extra = int((Decimal(base_minor) * (Decimal(multiplier) - 1)).to_integral_value(ROUND_DOWN))
    return extra if cap is None else min(extra, cap)


def recompute(explanation: dict[str, Any]) -> int:
    """The amount an explanation describes, in minor units."""
    if explanation["Formula"] == FIXED:
        return int(explanation["AmountMinor"])
    if explanation["Formula"] == BPS_OF_BASIS:
        return int(explanation["BasisMinor"]) * int(explanation["Bps"]) // BPS_DENOMINATOR
    if explanation["Formula"] == BOOST_MULTIPLIER:
        cap = explanation["MaximumIncrementalMinor"]
        return _boosted(
            int(explanation["BaseAmountMinor"]),
            str(explanation["Multiplier"]),
            None if cap is None else int(cap),
        )
    raise ValueError(f"unknown formula {explanation['Formula']!r}")
