"""Per-API-key rate limiting with the `limits` library.

In memory by default (per process); with `FINPLAT_REDIS_URL` every API process counts in
Redis, so several processes share one budget per key. Over the limit: 429 with
`Retry-After` (seconds) and the standard error body.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from limits import RateLimitItem, parse_many
from limits.aio.strategies import SlidingWindowCounterRateLimiter
from limits.storage import storage_from_string

from finplat.errors import ApiError

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
        uri = f"async+{redis_url}" if redis_url else "async+memory://"
        self.limiter = SlidingWindowCounterRateLimiter(storage_from_string(uri))

    async def check(self, api_key_id: int) -> None:
        """Count one request of `api_key_id`; raise `RateLimited` when any limit is spent."""
        for item in self.items:
            if not await self.limiter.hit(item, NAMESPACE, str(api_key_id)):
                stats = await self.limiter.get_window_stats(item, NAMESPACE, str(api_key_id))
                wait = max(1, math.ceil(stats.reset_time - time.time()))
                raise RateLimited(headers={"Retry-After": str(wait)})
