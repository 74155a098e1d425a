"""A sliding window counter kept in the process: the in-memory side of per-key rate limits.

The rule is the one `limits`' `SlidingWindowCounterRateLimiter` applies: a request is counted
when the current window's count plus the previous window's count, weighted by the share of
the previous window still inside the sliding window, stays below the limit. Kept here because
`limits`' in-memory storages schedule their expiry sweep on every hit (an asyncio task each
time for the async one, a timer thread for the other), which cost the top-up benchmark's
event loop about 8 % of its time (docs/performance.md). Shared limits (Redis) still use
`limits`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(slots=True)
class _Counts:
    window: int  # the current window's index: floor(now / length)
    previous: int
    current: int


class SlidingWindowCounter:
    """At most `limit` hits per key in any `seconds`-long window, approximated as above."""

    def __init__(self, limit: int, seconds: float) -> None:
        if limit < 1 or seconds <= 0:
            raise ValueError("a rate limit needs a positive count and a positive window")
        self.limit = limit
        self.seconds = seconds
        self._counts: dict[object, _Counts] = {}
        self._swept = 0  # the window in which keys idle for two windows were last dropped

    def hit(self, key: object, now: float) -> float | None:
        """Count one hit of `key` at `now` (seconds); None when counted, otherwise the seconds
        to wait before a hit would be counted (the refused hit is not counted)."""
        window = math.floor(now / self.seconds)
        self._sweep(window)
        counts = self._counts.get(key)
        if counts is None or counts.window < window - 1:
            counts = self._counts[key] = _Counts(window, 0, 0)
        elif counts.window == window - 1:
            counts.window, counts.previous, counts.current = window, counts.current, 0
        elapsed = now / self.seconds - window  # share of the current window gone by
        if counts.previous * (1 - elapsed) + counts.current < self.limit:
            counts.current += 1
            return None
        return self._wait(counts, elapsed)

    def wait(self, key: object, now: float) -> float | None:
        """What `hit` would answer at `now`, without counting anything."""
        counts = self._counts.get(key)
        window = math.floor(now / self.seconds)
        if counts is None or counts.window < window - 1:
            return None
        if counts.window == window - 1:
            counts = _Counts(window, counts.current, 0)
        elapsed = now / self.seconds - window
        if counts.previous * (1 - elapsed) + counts.current < self.limit:
            return None
        return self._wait(counts, elapsed)

    def _wait(self, counts: _Counts, elapsed: float) -> float:
        if counts.current >= self.limit:
            # Not before the next window, where this window's count starts to fade.
            fade = 1 - self.limit / counts.current
            return (1 - elapsed + fade) * self.seconds
        # The previous window's weight has to fall below what the limit leaves.
        needed = 1 - (self.limit - counts.current) / counts.previous
        return max(0.0, needed - elapsed) * self.seconds

    def _sweep(self, window: int) -> None:
        if window - self._swept < 2:
            return
        self._swept = window
        idle = [key for key, counts in self._counts.items() if counts.window < window - 1]
        for key in idle:
            del self._counts[key]

    def __len__(self) -> int:
        return len(self._counts)
