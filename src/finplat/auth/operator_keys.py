"""Platform operator keys: who administers vouchers and settings across every company.

An operator key is not a company key: it names no company, so it authenticates only on the
`/api/v2/admin/*` routes (`finplat.http.admin_routing`), where each request names the company
it acts on with `companyId`. Everywhere else it is an unknown key (401), like any other.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.auth import repository
from finplat.auth.api_keys import display_prefix, hash_api_key, new_operator_key
from finplat.auth.models import OperatorKey


@dataclass(frozen=True, slots=True)
class OperatorPrincipal:
    operator_key_id: int


@dataclass(frozen=True)
class IssuedOperatorKey:
    key_id: int
    api_key: str  # the only time the plain key exists


async def issue(session: AsyncSession) -> IssuedOperatorKey:
    """A new operator key; only its hash is stored."""
    plain = new_operator_key()
    row = OperatorKey(display_prefix=display_prefix(plain), key_hash=hash_api_key(plain))
    session.add(row)
    await session.flush()
    return IssuedOperatorKey(key_id=row.id, api_key=plain)


async def find_active(session: AsyncSession, api_key: str) -> OperatorPrincipal | None:
    key_id = await repository.find_active_operator_key(session, hash_api_key(api_key))
    return OperatorPrincipal(key_id) if key_id is not None else None


async def is_active(session: AsyncSession, principal: OperatorPrincipal) -> bool:
    return await repository.operator_key_is_active(session, principal.operator_key_id)
