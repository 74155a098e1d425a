"""The service's notion of "now", in one place so tests can move time."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from datetime import UTC, date, datetime

_now: Callable[[], datetime] = lambda: datetime.now(UTC)  # noqa: E731


def utcnow() -> datetime:
    return _now()


def today() -> date:
    return _now().date()


def set_clock(now: Callable[[], datetime]) -> None:
    """Replace the clock (tests only); pass `reset_clock` to restore real time."""
    global _now
    _now = now


def reset_clock() -> None:
    set_clock(lambda: datetime.now(UTC))


async def pause(stop: asyncio.Event, seconds: float) -> None:
    """Wait `seconds`, or less if `stop` is set meanwhile (background loops)."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=seconds)
