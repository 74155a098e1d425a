"""The sandbox callbacks a sandbox request has made its providers queue.

A sandbox endpoint sends the callbacks its simulation queued before it answers, so that the
simulation's effect shows in the response. Knowing which callbacks are its own lets it wait
for those only and leave alone the ones parallel requests of this process are about to send
themselves; otherwise parallel purchases take each other's callbacks and wait for each other.
(Callbacks are still sent in the order they were queued, own or not.)
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextvars import ContextVar

_emitted: ContextVar[list[str] | None] = ContextVar("sandbox_emitted", default=None)
_in_flight: set[str] = set()


async def collecting() -> AsyncGenerator[None, None]:
    """A dependency of the sandbox routes: the callbacks queued during the request are its
    own until it ends. The list is shared, not copied, with the tasks a provider call runs in
    (which get a copy of the request's context)."""
    own: list[str] = []
    _emitted.set(own)
    try:
        yield
    finally:
        _in_flight.difference_update(own)


def note(event_id: str) -> None:
    """A sandbox provider queued `event_id`, in a sandbox request or outside of one."""
    own = _emitted.get()
    if own is not None:
        own.append(event_id)
        _in_flight.add(event_id)


def own() -> list[str]:
    """The callbacks the current sandbox request queued (none outside of one)."""
    return list(_emitted.get() or ())


def others_in_flight() -> list[str]:
    """The callbacks other sandbox requests of this process queued and will send."""
    mine = set(_emitted.get() or ())
    return [event_id for event_id in _in_flight if event_id not in mine]
