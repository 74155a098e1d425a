"""Webhook secrets are stored sealed: the database never holds one in plaintext, and every
reader still gets the secret."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from finplat.companies import repository as companies_repository
from finplat.companies import service as companies
from finplat.config import Settings
from finplat.jobs import maintenance_once
from finplat.sealing import engines
from finplat.sealing.keyring import SecretKeyring, new_key
from tests.conftest import Tenant
from tests.sensitive_data import SCANNER, WEBHOOK_SECRET

CONFIG = "/api/v2/company/configuration"


async def stored_secret(factory: async_sessionmaker[AsyncSession], company_id: int) -> str:
    """The column's text as the database holds it."""
    async with factory() as session:
        raw = await session.execute(
            text("SELECT webhook_secret FROM companies WHERE id = :id"), {"id": company_id}
        )
        return str(raw.scalar_one())


async def all_stored_company_text(factory: async_sessionmaker[AsyncSession]) -> str:
    async with factory() as session:
        rows = (await session.execute(text("SELECT * FROM companies"))).all()
    return "\n".join(" ".join(str(value) for value in row) for row in rows)


@pytest.fixture
def rotated_keys(settings: Settings, engine: AsyncEngine) -> Iterator[SecretKeyring]:
    """The database's keyring after a rotation: a new key, the test key as the previous one."""
    before = engines.keyring_for(engine.dialect)
    key = SCANNER.watch_key(new_key())
    rotated = SecretKeyring.from_config(key, settings.secret_key.get_secret_value())
    engines.register(engine, rotated)
    try:
        yield rotated
    finally:
        engines.register(engine, before)


async def test_a_new_companys_webhook_secret_is_stored_sealed(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    stored = await stored_secret(session_factory, tenant.company_id)
    assert stored.startswith(settings.secret_keyring().current_prefix)
    assert tenant.webhook_secret not in stored
    assert WEBHOOK_SECRET.search(await all_stored_company_text(session_factory)) is None


async def test_a_rotated_webhook_secret_is_stored_sealed_and_read_back(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    rotated = (await tenant.client.put(CONFIG, json={"RotateWebhookSecret": True})).json()
    secret = rotated["WebhookSecret"]
    assert secret not in await stored_secret(session_factory, tenant.company_id)
    async with session_factory() as session:
        company = await companies_repository.get(session, tenant.company_id)
        assert company is not None
        assert company.webhook_secret == secret


async def test_after_a_key_rotation_maintenance_reseals_with_the_new_key(
    tenant: Tenant,
    session_factory: async_sessionmaker[AsyncSession],
    rotated_keys: SecretKeyring,
) -> None:
    assert not (await stored_secret(session_factory, tenant.company_id)).startswith(
        rotated_keys.current_prefix
    )
    done = await maintenance_once(session_factory)
    assert done["resealed_secrets"] >= 1
    assert (await stored_secret(session_factory, tenant.company_id)).startswith(
        rotated_keys.current_prefix
    )
    async with session_factory() as session:
        company = await companies_repository.get(session, tenant.company_id)
        assert company is not None
        assert company.webhook_secret == tenant.webhook_secret
    assert (await maintenance_once(session_factory))["resealed_secrets"] == 0


async def test_resealing_leaves_secrets_already_sealed_with_the_current_key(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    before = await stored_secret(session_factory, tenant.company_id)
    async with session_factory() as session:
        assert await companies.reseal_secrets(session) == 0
    assert await stored_secret(session_factory, tenant.company_id) == before
