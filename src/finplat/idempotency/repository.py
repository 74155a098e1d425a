"""SQL for idempotency keys. Every statement names the company, or a row found by one."""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, bindparam, delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.db import driver_statements
from finplat.db.dialect import for_update, inserts_ignoring_conflicts
from finplat.idempotency.models import IdempotencyKey


async def lock(
    session: AsyncSession, *, company_id: int, scope: str, key: str
) -> IdempotencyKey | None:
    stmt = for_update(
        select(IdempotencyKey).where(
            IdempotencyKey.company_id == company_id,
            IdempotencyKey.scope == scope,
            IdempotencyKey.key == key,
        )
    ).execution_options(populate_existing=True)
    row: IdempotencyKey | None = (await session.execute(stmt)).scalar_one_or_none()
    return row


_KEYS = cast(Table, IdempotencyKey.__table__)
# Every financial request with a key runs it first: built once per database, and run in Core
# on the session's connection (the ORM insert built per call cost three times as much).
_INSERT = {
    name: insert.returning(_KEYS.c.id) for name, insert in inserts_ignoring_conflicts(_KEYS).items()
}


async def insert(session: AsyncSession, **values: Any) -> int | None:
    """Insert a new key row; None if the key already exists (or is being inserted).

    The request method and path are kept for operators only, cut to their columns' widths.
    """
    values["request_method"] = values["request_method"][:8]
    values["request_path"] = values["request_path"][:512]
    connection = await driver_statements.connection_of(session)
    inserted = await driver_statements.returning(
        connection, _INSERT[connection.dialect.name], values
    )
    return int(inserted[0][0]) if inserted else None


async def update_owned(session: AsyncSession, *, record_id: int, token: str, **values: Any) -> bool:
    """Update the row only while `token` still holds its lease (fences a stalled worker).

    A Core statement built once, on the session's connection: it runs at every checkpoint of
    every financial request, and the ORM layer (statement building, tenant scoping) was a large
    part of its cost. The row id came from a company-scoped lookup and the lease token is a random
    secret of this request, so the company needs no second filter here.
    """
    connection = await driver_statements.connection_of(session)
    changed = await driver_statements.execute(
        connection, _UPDATE_OWNED, {"owned_id": record_id, "owned_token": token, **values}
    )
    return changed == 1


# Built once: its SET clause is the columns the execution's values name (a checkpoint's, the
# answer's, the lease's release), compiled once for each such set.
_UPDATE_OWNED = update(_KEYS).where(
    _KEYS.c.id == bindparam("owned_id"), _KEYS.c.lock_token == bindparam("owned_token")
)


async def take_over(
    session: AsyncSession, *, record_id: int, token: str, locked_until: datetime
) -> None:
    await session.execute(
        update(IdempotencyKey)
        .where(IdempotencyKey.id == record_id)
        .values(lock_token=token, locked_until=locked_until),
        execution_options={"synchronize_session": False},
    )


async def purge_completed_before(session: AsyncSession, *, cutoff: datetime) -> int:
    """Delete finished keys older than `cutoff` (system scope: the purge job). A key finishes
    after it was created, so the `created_at` index narrows the search without changing the
    result."""
    result = await session.execute(
        delete(IdempotencyKey).where(
            IdempotencyKey.created_at < cutoff,
            IdempotencyKey.completed_at.is_not(None),
            IdempotencyKey.completed_at < cutoff,
        ),
        execution_options={"synchronize_session": False},
    )
    return int(result.rowcount)  # type: ignore[attr-defined]
