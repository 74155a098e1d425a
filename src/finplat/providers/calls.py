"""Calling a provider: never under a lock, always with a timeout, retried only if idempotent.

Rules:
* The caller's transaction is committed before the call, so no row lock is held while waiting
  on an outside system (validate first, write local state after the call).
* Each attempt is cut after `timeout`: a timeout is an uncertain outcome, reported as 503
  `PROVIDER_TIMEOUT` and never retried here (the operation may have happened; the client
  retries with the same key and the provider's own deduplication answers).
* A technical failure (`ProviderTechnicalError`) is retried with a short backoff, only for
  idempotent calls; what remains is 503 `PROVIDER_UNAVAILABLE`.
* Logical refusals (`ProviderRejected`, 4xx) pass through unchanged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.config import Settings
from finplat.providers.errors import (
    ProviderTechnicalError,
    ProviderTimeout,
    ProviderUnavailable,
)

T = TypeVar("T")
log = structlog.get_logger("finplat.providers.calls")


@dataclass(frozen=True)
class CallPolicy:
    timeout_seconds: float = 10.0
    retries: int = 2
    backoff_seconds: float = 0.05

    @property
    def longest_call_seconds(self) -> float:
        """The longest one `commit_then_call` can take: every attempt cut at the timeout, with
        the backoffs between them."""
        attempts = 1 + self.retries
        backoffs = sum(self.backoff_seconds * 2.0**i for i in range(self.retries))
        return float(attempts * self.timeout_seconds + backoffs)

    @classmethod
    def from_settings(cls, settings: Settings) -> CallPolicy:
        return cls(
            timeout_seconds=settings.provider_timeout_seconds,
            retries=settings.provider_retries,
            backoff_seconds=settings.provider_retry_backoff_seconds,
        )


async def commit_then_call(
    session: AsyncSession | None,
    policy: CallPolicy,
    *,
    provider: str,
    operation: str,
    call: Callable[[], Awaitable[T]],
    idempotent: bool,
) -> T:
    """Commit the session's work, then call the provider: the one way a provider is called.

    Whatever the caller wrote before the call is committed by it (a failed call rolls none of
    it back), and whatever it reads after the call is read in a new transaction. `session` is
    None only where the caller holds none."""
    if session is not None and session.in_transaction():
        await session.commit()
    attempts = 1 + (policy.retries if idempotent else 0)
    for attempt in range(1, attempts + 1):
        try:
            return await asyncio.wait_for(call(), timeout=policy.timeout_seconds)
        except TimeoutError:
            log.warning("provider_timeout", provider=provider, operation=operation)
            raise ProviderTimeout() from None
        except ProviderTechnicalError as exc:
            log.warning(
                "provider_technical_failure",
                provider=provider,
                operation=operation,
                attempt=attempt,
                reason=exc.reason,
            )
            if attempt < attempts:
                await asyncio.sleep(policy.backoff_seconds * 2 ** (attempt - 1))
    raise ProviderUnavailable()
