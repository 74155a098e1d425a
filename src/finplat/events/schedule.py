"""The webhook retry schedule: the first attempt, then up to 15 retries over about 76 hours.

Delays after each failed attempt (before jitter): 10 s, 1 min, 5 min, 15 min, 30 min, 1 h, 2 h,
3 h, 4 h, 6 h, 8 h, 10 h, 12 h, 14 h, 15 h; 75 h 51 min in all. Each delay gets ±10 % jitter so
a recovering receiver is not hit by every queued event at once.
"""

from __future__ import annotations

import random
from datetime import timedelta

RETRY_DELAYS: tuple[timedelta, ...] = (
    timedelta(seconds=10),
    timedelta(minutes=1),
    timedelta(minutes=5),
    timedelta(minutes=15),
    timedelta(minutes=30),
    timedelta(hours=1),
    timedelta(hours=2),
    timedelta(hours=3),
    timedelta(hours=4),
    timedelta(hours=6),
    timedelta(hours=8),
    timedelta(hours=10),
    timedelta(hours=12),
    timedelta(hours=14),
    timedelta(hours=15),
)
MAX_ATTEMPTS = 1 + len(RETRY_DELAYS)  # 16
JITTER = 0.1
MAX_RETRY_AFTER = timedelta(hours=24)


def delay_after(attempt: int, *, retry_after: timedelta | None = None) -> timedelta | None:
    """How long to wait after failed attempt number `attempt` (1-based); None when the attempts
    are used up. A receiver's `Retry-After` is honoured (capped at 24 hours)."""
    if attempt >= MAX_ATTEMPTS:
        return None
    if retry_after is not None:
        return min(max(retry_after, timedelta(seconds=1)), MAX_RETRY_AFTER)
    base = RETRY_DELAYS[attempt - 1]
    return base * random.uniform(1 - JITTER, 1 + JITTER)  # noqa: S311 - jitter, not security
