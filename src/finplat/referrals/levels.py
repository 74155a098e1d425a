"""A programme's levels and which one a referrer is at (pure: no I/O).

Levels are ordered by `threshold`, lowest first; the first has threshold 0, so every
referrer is at some level. What the threshold counts is the programme's `LevelBasis`:
`QUALIFIED_REFERRALS` (friends who made their first qualifying top-up within the look-back)
or `QUALIFYING_TOPUP_VOLUME` (the minor units of the friends' top-ups within the look-back).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from itertools import pairwise
from typing import Any


class LevelBasis(StrEnum):
    QUALIFIED_REFERRALS = "QUALIFIED_REFERRALS"
    QUALIFYING_TOPUP_VOLUME = "QUALIFYING_TOPUP_VOLUME"


class CommissionBasis(StrEnum):
    FEE = "FEE"  # the top-up's fee
    VOLUME = "VOLUME"  # the top-up's amount


class LevelChangeReason(StrEnum):
    JOINED = "JOINED"  # the referrer's first friend: the lowest level
    THRESHOLD_REACHED = "THRESHOLD_REACHED"
    THRESHOLD_LOST = "THRESHOLD_LOST"  # what counted fell out of the look-back
    PROGRAM_CHANGED = "PROGRAM_CHANGED"  # the level was removed from the programme


@dataclass(frozen=True, slots=True)
class Level:
    code: str
    name: str
    threshold: int
    commission_basis: CommissionBasis
    commission_bps: int
    welcome_minor: int
    qualification_minor: int

    @classmethod
    def stored(cls, row: dict[str, Any]) -> Level:
        return cls(
            code=row["code"],
            name=row["name"],
            threshold=int(row["threshold"]),
            commission_basis=CommissionBasis(row["commission_basis"]),
            commission_bps=int(row["commission_bps"]),
            welcome_minor=int(row["welcome_minor"]),
            qualification_minor=int(row["qualification_minor"]),
        )

    def stored_form(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "threshold": self.threshold,
            "commission_basis": self.commission_basis.value,
            "commission_bps": self.commission_bps,
            "welcome_minor": self.welcome_minor,
            "qualification_minor": self.qualification_minor,
        }


def problems(levels: list[Level]) -> list[str]:
    """What is wrong with a ladder of levels (none: it is usable)."""
    found: list[str] = []
    if not levels:
        return ["At least one level is needed."]
    if levels[0].threshold != 0:
        found.append("The first level's Threshold must be 0: every referrer is at a level.")
    for lower, higher in pairwise(levels):
        if higher.threshold <= lower.threshold:
            found.append("Thresholds must increase from one level to the next.")
            break
    codes = [level.code for level in levels]
    if len(set(codes)) != len(codes):
        found.append("Level codes must be unique.")
    return found


def level_for(levels: list[Level], measure: int) -> Level:
    """The highest level whose threshold `measure` reaches."""
    reached = levels[0]
    for level in levels:
        if measure >= level.threshold:
            reached = level
    return reached


def by_code(levels: list[Level], code: str) -> Level | None:
    return next((level for level in levels if level.code == code), None)
