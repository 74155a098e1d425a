"""API keys the process has already found valid, for the batched top-ups' edge.

A key's hash always names the same key row and company, so a valid key is remembered (up to
`capacity` of them) and found again without a query. Whether it is still valid is not
remembered: the batch that runs the request checks that the key is not revoked, in the same
read as the rest of its checks (`topup_batches_repository.read`).
"""

from __future__ import annotations

from collections import OrderedDict

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.auth import repository
from finplat.auth.api_keys import hash_api_key
from finplat.auth.principal import Principal


class KnownApiKeys:
    def __init__(self, capacity: int = 10_000) -> None:
        self.capacity = capacity
        self._known: OrderedDict[str, Principal] = OrderedDict()

    async def principal(
        self, factory: async_sessionmaker[AsyncSession], api_key: str
    ) -> Principal | None:
        """The company behind `api_key`, or None for a key unknown or revoked now."""
        key_hash = hash_api_key(api_key)
        known = self._known.get(key_hash)
        if known is not None:
            self._known.move_to_end(key_hash)
            return known
        async with factory() as session:
            row = await repository.find_active_by_hash(session, key_hash)
        if row is None:
            return None
        known = Principal(company_id=row.company_id, api_key_id=row.id)
        self._known[key_hash] = known
        if len(self._known) > self.capacity:
            self._known.popitem(last=False)
        return known
