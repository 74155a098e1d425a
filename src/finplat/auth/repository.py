"""SQL for API keys. Lookup by hash runs before any company is known, so it is not scoped."""

from __future__ import annotations

from sqlalchemy import bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.auth.models import ApiKey, OperatorKey
from finplat.db import driver_statements, prepared
from finplat.kit.clock import utcnow


async def find_active_by_hash(session: AsyncSession, key_hash: str) -> ApiKey | None:
    stmt = select(ApiKey).where(ApiKey.key_hash == key_hash, ApiKey.revoked_at.is_(None))
    return (await session.execute(stmt)).scalar_one_or_none()


# Every authenticated request runs it first: a prebuilt Core statement on the session's
# connection, without the ORM's statement machinery (most of its cost for one column); on
# PostgreSQL on the driver itself, where SQLAlchemy's execution of even a Core statement costs
# nearly three times asyncpg's (165 against 60 µs of CPU, docs/performance-log.md).
_API_KEYS = ApiKey.__table__
_KEY_IS_ACTIVE = select(_API_KEYS.c.id).where(
    _API_KEYS.c.id == bindparam("key_id"), _API_KEYS.c.revoked_at.is_(None)
)
_KEY_IS_ACTIVE_SQL = "SELECT id FROM api_keys WHERE id = $1 AND revoked_at IS NULL"


async def is_active(session: AsyncSession, key_id: int) -> bool:
    connection = await driver_statements.connection_of(session)
    if connection.dialect.name == "postgresql":
        # A plain read: in autocommit before the request's first write, like every such read
        # (`finplat.db.postgres_reads`), or inside the transaction the connection is in.
        pg = await prepared.driver(connection)
        return await pg.fetchval(_KEY_IS_ACTIVE_SQL, key_id) is not None
    found = await connection.execute(_KEY_IS_ACTIVE, {"key_id": key_id})
    return found.first() is not None


async def list_for_company(session: AsyncSession, company_id: int) -> list[ApiKey]:
    stmt = select(ApiKey).where(ApiKey.company_id == company_id).order_by(ApiKey.id)
    return list((await session.execute(stmt)).scalars())


async def revoke(session: AsyncSession, *, company_id: int, key_id: int) -> bool:
    stmt = (
        update(ApiKey)
        .where(ApiKey.company_id == company_id, ApiKey.id == key_id, ApiKey.revoked_at.is_(None))
        .values(revoked_at=utcnow(), updated_at=utcnow())
    )
    result = await session.execute(stmt)
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def revoke_all_except(session: AsyncSession, *, company_id: int, keep_key_id: int) -> int:
    stmt = (
        update(ApiKey)
        .where(
            ApiKey.company_id == company_id,
            ApiKey.id != keep_key_id,
            ApiKey.revoked_at.is_(None),
        )
        .values(revoked_at=utcnow(), updated_at=utcnow())
    )
    result = await session.execute(stmt)
    return int(result.rowcount)  # type: ignore[attr-defined]


async def find_active_operator_key(session: AsyncSession, key_hash: str) -> int | None:
    stmt = select(OperatorKey.id).where(
        OperatorKey.key_hash == key_hash, OperatorKey.revoked_at.is_(None)
    )
    found: int | None = (await session.execute(stmt)).scalar_one_or_none()
    return found


async def operator_key_is_active(session: AsyncSession, key_id: int) -> bool:
    stmt = select(OperatorKey.id).where(OperatorKey.id == key_id, OperatorKey.revoked_at.is_(None))
    return (await session.execute(stmt)).scalar_one_or_none() is not None
