"""SQL for companies (system scope: used by the CLI and at authentication)."""

from __future__ import annotations

from sqlalchemy import String, select, type_coerce, update
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.companies.models import Company


async def get(session: AsyncSession, company_id: int, *, lock: bool = False) -> Company | None:
    if lock:
        return await session.get(Company, company_id, with_for_update=True, populate_existing=True)
    return await session.get(Company, company_id)


async def add(session: AsyncSession, company: Company) -> Company:
    session.add(company)
    await session.flush()
    return company


async def reseal_webhook_secrets(session: AsyncSession, *, current_prefix: str, limit: int) -> int:
    """Write back (so seal with the current key) up to `limit` webhook secrets whose stored
    form does not start with `current_prefix`; returns how many."""
    stored = type_coerce(Company.webhook_secret, String)  # the sealed text, not the secret
    stale = (
        select(Company.id, Company.webhook_secret)
        .where(stored.not_like(current_prefix + "%"))
        .order_by(Company.id)
        .limit(limit)
    )
    rows = (await session.execute(stale)).all()
    for company_id, secret in rows:
        await session.execute(
            update(Company).where(Company.id == company_id).values(webhook_secret=secret),
            execution_options={"synchronize_session": False},
        )
    return len(rows)
