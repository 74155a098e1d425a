"""The API keys this process has found valid: authentication without holding a transaction.

A key's hash always names the same key row and company, so once a key is found valid its
principal is kept (up to `capacity` keys, least recently used out) and a request is
authenticated from memory while its body is still arriving; only an unknown key costs a short
read of its own. Whether a known key is still valid is not remembered: the request's unit of
work checks that the key is not revoked as its first statement (`still_active`), and the
batched top-ups check it in their own read, so a revocation takes effect on the next request.
"""

from __future__ import annotations

from collections import OrderedDict

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.auth import repository
from finplat.auth.api_keys import hash_api_key
from finplat.auth.principal import Principal


class ApiKeyStore:
    def __init__(self, capacity: int = 10_000) -> None:
        self.capacity = capacity
        self._known: OrderedDict[str, Principal] = OrderedDict()

    def known(self, api_key: str) -> Principal | None:
        """The principal of a key found valid before, without any database work."""
        key_hash = hash_api_key(api_key)
        known = self._known.get(key_hash)
        if known is not None:
            self._known.move_to_end(key_hash)
        return known

    async def look_up(
        self, factory: async_sessionmaker[AsyncSession], api_key: str
    ) -> Principal | None:
        """The principal of `api_key` read in a short session of its own (remembered when
        valid), or None for a key unknown or revoked."""
        key_hash = hash_api_key(api_key)
        async with factory() as session:
            row = await repository.find_active_by_hash(session, key_hash)
        if row is None:
            return None
        principal = Principal(company_id=row.company_id, api_key_id=row.id)
        self._known[key_hash] = principal
        if len(self._known) > self.capacity:
            self._known.popitem(last=False)
        return principal

    async def principal(
        self, factory: async_sessionmaker[AsyncSession], api_key: str
    ) -> Principal | None:
        """The principal of `api_key`, from memory when known, otherwise looked up."""
        return self.known(api_key) or await self.look_up(factory, api_key)

    def forget(self, api_key: str) -> None:
        self._known.pop(hash_api_key(api_key), None)


async def still_active(session: AsyncSession, principal: Principal) -> bool:
    """Whether the principal's key is still unrevoked, read in the request's transaction."""
    return await repository.is_active(session, principal.api_key_id)
