"""Authenticating a request before it costs anything: from memory when the key is known, with
one short read of its own otherwise, and not at all while the address is throttled."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.auth.failure_throttle import FailedAuthThrottle
from finplat.auth.key_store import ApiKeyStore
from finplat.auth.principal import Principal
from finplat.errors import Unauthorized

INVALID_KEY = "The API key is not valid."
MISSING_KEY = "The x-api-key header is required."


async def authenticate(
    *,
    store: ApiKeyStore,
    throttle: FailedAuthThrottle,
    factory: async_sessionmaker[AsyncSession],
    api_key: str | None,
    address: str,
    missing: str = MISSING_KEY,
) -> Principal:
    """The caller behind `api_key` (None: no usable key, refused with `missing`).

    A key this process knows valid is taken at once, whatever the address. Otherwise, while
    `address` has spent its failures the request is 429 without a read; else the key is read
    in a session of its own (no transaction is held while the body arrives), and a missing,
    unknown or revoked key is 401 and counts as a failure of the address.
    """
    if api_key is not None:
        known = store.known(api_key)
        if known is not None:
            return known
    refusal = await throttle.refusal(address)
    if refusal is not None:
        raise refusal
    principal = await store.look_up(factory, api_key) if api_key is not None else None
    if principal is None:
        await throttle.count_failure(address)
        raise Unauthorized(missing if api_key is None else INVALID_KEY)
    return principal


async def revoked(
    *, store: ApiKeyStore, throttle: FailedAuthThrottle, api_key: str, address: str
) -> Unauthorized:
    """The answer for a key known valid that the request's transaction found revoked since:
    the key is forgotten and the failure counted."""
    store.forget(api_key)
    await throttle.count_failure(address)
    return Unauthorized(INVALID_KEY)
