"""Per-API-key rate limiting: limits written as `limits` parses them ("100/second").

In memory by default (per process, `sliding_window`); with `FINPLAT_REDIS_URL` every API
process counts in Redis through the `limits` library, so several processes share one budget
per key. Both count with a sliding window counter. Over the limit: 429 with `Retry-After`
(seconds) and the standard error body.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from limits import RateLimitItem, parse_many
from limits.aio.strategies import SlidingWindowCounterRateLimiter
from limits.storage import storage_from_string

from finplat.errors import ApiError
from finplat.http.sliding_window import SlidingWindowCounter

NAMESPACE = "finplat:api-key"
# Request state: an edge that counted the request against its API key's limit before handing
# it on (`cards.topup_lane`) leaves a `CountedRequest` here, so the route neither counts it
# again nor forgets the verdict.
RATE_COUNTED = "rate_limit_counted"


@dataclass(frozen=True)
class CountedRequest:
    api_key_id: int
    limited: RateLimited | None  # the answer when the limit was spent


class RateLimited(ApiError):
    status = 429
    code = "RATE_LIMITED"
    message = "Too many requests for this API key; retry after the time in Retry-After."


class ApiKeyRateLimiter:
    def __init__(self, limits: str, *, redis_url: str | None = None) -> None:
        self.items: list[RateLimitItem] = parse_many(limits)
        self.shared: SlidingWindowCounterRateLimiter | None = None
        self.local: list[SlidingWindowCounter] = []
        if redis_url:
            storage = storage_from_string(f"async+{redis_url}")
            self.shared = SlidingWindowCounterRateLimiter(storage)
        else:
            self.local = [
                SlidingWindowCounter(item.amount, item.get_expiry()) for item in self.items
            ]

    async def check(self, api_key_id: int) -> None:
        """Count one request of `api_key_id`; raise `RateLimited` when any limit is spent."""
        if self.shared is None:
            now = time.time()
            for window in self.local:
                wait = window.hit(api_key_id, now)
                if wait is not None:
                    raise _limited(wait)
            return
        for item in self.items:
            if not await self.shared.hit(item, NAMESPACE, str(api_key_id)):
                stats = await self.shared.get_window_stats(item, NAMESPACE, str(api_key_id))
                raise _limited(stats.reset_time - time.time())


def _limited(wait_seconds: float) -> RateLimited:
    return RateLimited(headers={"Retry-After": str(max(1, math.ceil(wait_seconds)))})
