"""Test fixtures: a migrated database per run, each test in a rolled-back transaction, and
HTTP clients through httpx's ASGITransport."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

from finplat.app import create_app
from finplat.auth.failure_throttle import FailedAuthThrottle
from finplat.auth.key_store import ApiKeyStore
from finplat.companies import service as companies
from finplat.config import Settings
from finplat.db.engine import create_engine
from finplat.db.migrate import upgrade_to_head
from finplat.http.observability import configure_logging
from finplat.http.rate_limit import ApiKeyRateLimiter
from finplat.kit.clock import reset_clock
from finplat.ledger.verification import verify
from finplat.mor.identity.throttle import SignInThrottle
from finplat.providers.registry import build_providers
from tests.databases import TEMPLATE, drop_abandoned_databases, scratch_database

pytest_plugins = ["tests.scanner_plugin"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `long` first. pytest-xdist hands tests out in collection order; a test of
    minutes handed out late becomes the run's tail, one worker busy while the others idle."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


@pytest.fixture(scope="session", autouse=True)
async def _scratch_databases() -> AsyncIterator[None]:
    """The schema template `tests.databases.migrated_database` copies lives for the run. What
    a killed run left behind is dropped first."""
    await drop_abandoned_databases()
    yield
    await TEMPLATE.drop()


@pytest.fixture(scope="session")
async def database_url() -> AsyncIterator[str]:
    async with scratch_database() as url:
        await asyncio.to_thread(upgrade_to_head, url)
        yield url


@pytest.fixture(scope="session")
def settings(database_url: str) -> Settings:
    # A short provider timeout keeps the timeout tests quick; still far above a sandbox call.
    # One batch of top-ups at a time: the tests' sessions share one connection.
    return Settings(
        database_url=database_url,
        sandbox=True,
        log_format="json",
        provider_timeout_seconds=2.0,
        topup_batch_runners=1,
        # The cheapest argon2id: a password hashed per test must not cost a second of CPU.
        mor_password_time_cost=1,
        mor_password_memory_kib=8,
        mor_password_parallelism=1,
    )


@pytest.fixture(scope="session")
async def engine(settings: Settings) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(settings)
    yield engine
    await engine.dispose()


@pytest.fixture
async def connection(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """A connection inside a transaction that is rolled back after the test."""
    async with engine.connect() as conn:
        transaction = await conn.begin()
        try:
            yield conn
        finally:
            await transaction.rollback()


@pytest.fixture
def session_factory(connection: AsyncConnection) -> async_sessionmaker[AsyncSession]:
    # Each unit of work becomes a SAVEPOINT inside the test's transaction: its commit and
    # rollback behave as in production, and the test's rollback undoes everything.
    return async_sessionmaker(
        bind=connection,
        expire_on_commit=False,
        autoflush=False,
        join_transaction_mode="create_savepoint",
    )


@pytest.fixture
async def session(
    session_factory: async_sessionmaker[AsyncSession],
) -> AsyncIterator[AsyncSession]:
    async with session_factory() as session:
        yield session


@pytest.fixture(scope="session")
def shared_app(settings: Settings) -> FastAPI:
    """One app for the whole run. FastAPI prepares each included route's request handling
    on an app's first request (about half a second for this API), which every test paid
    again when each built its own app."""
    return create_app(settings)


@pytest.fixture
async def app(
    settings: Settings,
    session_factory: async_sessionmaker[AsyncSession],
    shared_app: FastAPI,
) -> AsyncIterator[FastAPI]:
    """The app on the test's transaction, with its own providers and rate limiter. Routes a
    test adds, and any state it swaps, are put back afterwards. After the test, the ledger
    must still verify: every HTTP test that moved money proves it consistent."""
    app = shared_app
    routes = list(app.router.routes)
    # Logs go to this test's stdout (pytest swaps it per test; an app of its own did this).
    configure_logging(settings)
    app.state.settings = settings
    app.state.session_factory = session_factory
    app.state.providers = build_providers(settings, session_factory)
    app.state.rate_limiter = ApiKeyRateLimiter(settings.rate_limit, redis_url=settings.redis_url)
    app.state.auth_throttle = FailedAuthThrottle(settings.auth_failure_limit)
    app.state.api_keys = ApiKeyStore()
    app.state.mor_sign_in_throttle = SignInThrottle(settings)
    # Generated afresh when a test asks for it: the test may add routes after an earlier test
    # had the document built.
    app.openapi_schema = None
    try:
        yield app
    finally:
        app.router.routes[:] = routes
        app.dependency_overrides.clear()
    async with session_factory() as session:
        report = await verify(session)
    assert report.ok, report.summary()


@pytest.fixture(autouse=True)
def _real_clock() -> None:
    reset_clock()


@pytest.fixture
async def anonymous(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """A client with no API key."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://finplat.test") as client:
        yield client


@dataclass
class Tenant:
    company_id: int
    api_key: str
    api_key_id: int
    webhook_secret: str
    client: httpx.AsyncClient


TenantFactory = Callable[..., Awaitable[Tenant]]


@pytest.fixture
async def make_tenant(
    app: FastAPI, session_factory: async_sessionmaker[AsyncSession]
) -> AsyncIterator[TenantFactory]:
    """Create companies (with their default tiers) and clients authenticated as them."""
    clients: list[httpx.AsyncClient] = []

    async def make(name: str = "Acme Ltd", *, mor: bool = False) -> Tenant:
        async with session_factory() as session:
            created = await companies.create_company(session, name=name, sandbox=True, is_mor=mor)
            await session.commit()
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://finplat.test",
            headers={"x-api-key": created.key.api_key},
        )
        clients.append(client)
        return Tenant(
            company_id=created.company.id,
            api_key=created.key.api_key,
            api_key_id=created.key.key_id,
            webhook_secret=created.webhook_secret,
            client=client,
        )

    yield make
    for client in clients:
        await client.aclose()


@pytest.fixture
async def tenant(make_tenant: TenantFactory) -> Tenant:
    return await make_tenant()


@pytest.fixture
async def mor_tenant(make_tenant: TenantFactory) -> Tenant:
    """A company enabled for Merchant of Record."""
    return await make_tenant("Merchant Ltd", mor=True)


@pytest.fixture
async def api(tenant: Tenant) -> httpx.AsyncClient:
    """A client authenticated as a fresh company."""
    return tenant.client
