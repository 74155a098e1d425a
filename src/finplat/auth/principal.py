"""Who is calling: the company behind a valid API key."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.auth import repository
from finplat.auth.api_keys import hash_api_key
from finplat.errors import Unauthorized


@dataclass(frozen=True, slots=True)
class Principal:
    company_id: int
    api_key_id: int


async def authenticate(session: AsyncSession, api_key: str | None) -> Principal:
    """Resolve the `x-api-key` header; missing, unknown and revoked keys are all 401."""
    if not api_key:
        raise Unauthorized("The x-api-key header is required.")
    key = await repository.find_active_by_hash(session, hash_api_key(api_key.strip()))
    if key is None:
        raise Unauthorized("The API key is not valid.")
    return Principal(company_id=key.company_id, api_key_id=key.id)
