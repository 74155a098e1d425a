"""Measuring several scenarios in interleaved rounds, so that the machine's drift falls on all
of them alike.

This machine's speed moves by a third within minutes (docs/performance.md). Measured one after
the other, two scenarios' ratio says as much about the minute each ran in as about the code:
the same code gave `hot_vs_spread` 0.73 in one run and 1.12 in the next. Here each scenario's
time is cut into slices run in rounds whose order reverses every round (A B C, C B A, A B C,
C B A): over an even number of rounds every scenario's slices sit, on average, at the same
moment of the run, so a drift that is linear over the run slows all scenarios alike and
cancels out of their ratios; more rounds also average the faster wobbles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


def schedule(scenarios: Sequence[str], rounds: int) -> list[tuple[int, str]]:
    """(round, scenario) in the order to run them: `scenarios` in order in even rounds,
    reversed in odd ones."""
    if rounds < 2 or rounds % 2:
        raise ValueError("rounds must be an even number, 2 or more")
    order: list[tuple[int, str]] = []
    for round_no in range(rounds):
        names = list(scenarios) if round_no % 2 == 0 else list(reversed(scenarios))
        order += [(round_no, name) for name in names]
    return order


@dataclass
class Slices:
    """One scenario's slices, combined as if they were one window of the summed length."""

    ok: int = 0
    window_seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)  # seconds, of the successful requests

    def add(self, latencies: Sequence[float], window_seconds: float) -> None:
        self.ok += len(latencies)
        self.window_seconds += window_seconds
        self.latencies += latencies

    @property
    def ops_per_s(self) -> float:
        return self.ok / self.window_seconds if self.window_seconds > 0 else 0.0

    def percentile_ms(self, p: float) -> float:
        """The latency below which a fraction `p` of the requests finished (nearest rank)."""
        if not self.latencies:
            return 0.0
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000


def time_weighted_mean(slices: Sequence[tuple[float, float]]) -> float:
    """The mean of per-slice figures given as (figure, seconds), each weighted by its slice's
    length: for rates, total operations over total seconds."""
    seconds = sum(length for _, length in slices)
    return sum(figure * length for figure, length in slices) / seconds if seconds > 0 else 0.0
