"""Requests without a valid API key, counted per client address.

Guessing keys, or a misconfigured client sending a stale one, must not cost a database read
per attempt: past `FINPLAT_AUTH_FAILURE_LIMIT` (default 20 a minute) missing, unknown or
revoked keys from one address, that address's requests are answered 429 with `Retry-After`
before any database work, until the window lets it try again. A key this process already knows
to be valid (`auth.key_store`) is never refused here, whatever the address: a partner sharing
an address with a prober keeps working. Counted in memory per process, or in Redis with
`FINPLAT_REDIS_URL` so every process shares the count (as the per-key limits do).
"""

from __future__ import annotations

import math
import time

from limits import RateLimitItem, parse_many
from limits.aio.strategies import SlidingWindowCounterRateLimiter
from limits.storage import storage_from_string

from finplat.errors import ApiError
from finplat.http.sliding_window import SlidingWindowCounter

NAMESPACE = "finplat:auth-failures"


class AuthenticationThrottled(ApiError):
    status = 429
    code = "AUTHENTICATION_THROTTLED"
    message = (
        "Too many requests without a valid API key from this address; retry after the time "
        "in Retry-After."
    )


class FailedAuthThrottle:
    def __init__(self, limits: str, *, redis_url: str | None = None) -> None:
        self.items: list[RateLimitItem] = parse_many(limits)
        self.shared: SlidingWindowCounterRateLimiter | None = None
        self.local: list[SlidingWindowCounter] = []
        if redis_url:
            self.shared = SlidingWindowCounterRateLimiter(storage_from_string(f"async+{redis_url}"))
        else:
            self.local = [
                SlidingWindowCounter(item.amount, item.get_expiry()) for item in self.items
            ]

    async def refusal(self, address: str) -> AuthenticationThrottled | None:
        """The answer for `address` while it has spent its failures, else None (nothing is
        counted)."""
        if self.shared is None:
            now = time.time()
            waits = [w for w in (window.wait(address, now) for window in self.local) if w]
            return _throttled(max(waits)) if waits else None
        for item in self.items:
            if not await self.shared.test(item, NAMESPACE, address):
                stats = await self.shared.get_window_stats(item, NAMESPACE, address)
                return _throttled(stats.reset_time - time.time())
        return None

    async def count_failure(self, address: str) -> None:
        if self.shared is None:
            now = time.time()
            for window in self.local:
                window.hit(address, now)
            return
        for item in self.items:
            await self.shared.hit(item, NAMESPACE, address)


def _throttled(wait_seconds: float) -> AuthenticationThrottled:
    return AuthenticationThrottled(headers={"Retry-After": str(max(1, math.ceil(wait_seconds)))})
