"""All SQL of partner-hosted balances: the configuration and the partner outbox."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import String, or_, select, type_coerce, update
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.companies.models import Company
from finplat.db.dialect import for_update, is_postgresql
from finplat.db.repository import CompanyRepository, of_company
from finplat.partner_hosted.models import PartnerDelivery, PartnerHostedConfig
from finplat.users.models import User

PENDING = "pending"
RETRYING = "retrying"
SUCCEEDED = "succeeded"
FAILED = "failed"
QUEUED = (PENDING, RETRYING)


class PartnerHostedConfigRepository(CompanyRepository[PartnerHostedConfig]):
    model = PartnerHostedConfig

    async def current(self) -> PartnerHostedConfig | None:
        # Every card decision asks: built once.
        return (await self.session.execute(_CURRENT, self.bound())).scalar_one_or_none()


_CURRENT = of_company(PartnerHostedConfig)


class PartnerDeliveryRepository(CompanyRepository[PartnerDelivery]):
    model = PartnerDelivery

    async def by_source(self, source: str) -> PartnerDelivery | None:
        stmt = self.scoped().where(PartnerDelivery.source == source)
        return (await self.session.execute(stmt)).scalar_one_or_none()


# --------------------------------------------------------- worker queries (system scope)


async def claim_due(
    session: AsyncSession, *, now: datetime, limit: int, token: str, locked_until: datetime
) -> list[dict[str, Any]]:
    """Lease up to `limit` due partner deliveries to this worker; other workers skip them."""
    stmt = (
        select(PartnerDelivery.id)
        .where(
            PartnerDelivery.status.in_(QUEUED),
            PartnerDelivery.next_attempt_at <= now,
            or_(PartnerDelivery.locked_until.is_(None), PartnerDelivery.locked_until <= now),
        )
        .order_by(PartnerDelivery.next_attempt_at)
        .limit(limit)
    )
    if is_postgresql(session):
        stmt = for_update(stmt, skip_locked=True)
    ids = list((await session.execute(stmt)).scalars())
    if not ids:
        return []
    await session.execute(
        update(PartnerDelivery)
        .where(PartnerDelivery.id.in_(ids))
        .values(lock_token=token, locked_until=locked_until),
        execution_options={"synchronize_session": False},
    )
    rows = await session.execute(
        select(
            PartnerDelivery.id,
            PartnerDelivery.attempts,
            PartnerDelivery.company_id,
            PartnerDelivery.operation,
            PartnerDelivery.body,
            Company.webhook_secret,
        )
        .join(Company, Company.id == PartnerDelivery.company_id)
        .where(PartnerDelivery.id.in_(ids))
    )
    return [dict(row._mapping) for row in rows]


async def config_of(session: AsyncSession, company_id: int) -> PartnerHostedConfig | None:
    return await PartnerHostedConfigRepository(session, company_id).current()


async def record_attempt(
    session: AsyncSession,
    *,
    delivery_id: str,
    token: str,
    status_code: int | None,
    error: str | None,
    outcome: dict[str, Any],
) -> bool:
    """Store an attempt's outcome, only while this worker still holds the lease."""
    result = await session.execute(
        update(PartnerDelivery)
        .where(PartnerDelivery.id == delivery_id, PartnerDelivery.lock_token == token)
        .values(
            attempts=PartnerDelivery.attempts + 1,
            last_status_code=status_code,
            last_error=error,
            lock_token=None,
            locked_until=None,
            **outcome,
        ),
        execution_options={"synchronize_session": False},
    )
    return bool(getattr(result, "rowcount", 0))


async def external_user_id(session: AsyncSession, *, company_id: int, user_id: int) -> str:
    """The partner's id of the user (the partner keeps balances under it)."""
    stmt = select(User.external_user_id).where(User.company_id == company_id, User.id == user_id)
    return str((await session.execute(stmt)).scalar_one())


async def reseal_api_keys(session: AsyncSession, *, current_prefix: str, limit: int) -> int:
    """Write back (so seal with the current key) up to `limit` partner API keys whose stored
    form does not start with `current_prefix`; returns how many. Every company's (the
    maintenance job's query after a rotation of `FINPLAT_SECRET_KEY`)."""
    stored = type_coerce(PartnerHostedConfig.api_key, String)  # the sealed text, not the key
    stale = (
        select(PartnerHostedConfig.id, PartnerHostedConfig.api_key)
        .where(stored.not_like(current_prefix + "%"))
        .order_by(PartnerHostedConfig.id)
        .limit(limit)
    )
    rows = (await session.execute(stale)).all()
    for config_id, api_key in rows:
        await session.execute(
            update(PartnerHostedConfig)
            .where(PartnerHostedConfig.id == config_id)
            .values(api_key=api_key),
            execution_options={"synchronize_session": False},
        )
    return len(rows)
