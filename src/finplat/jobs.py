"""Background work: webhook delivery, maintenance (expire reservations, purge keys) and
reconciliation with the providers.

Runs inside `finplat serve` (unless `--no-worker`) and as `finplat worker`; any number of
copies may run against one PostgreSQL database.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.banking.payees import service as payees
from finplat.config import Settings
from finplat.db.unit_of_work import unit_of_work
from finplat.events.worker import WebhookWorker
from finplat.idempotency import service as idempotency
from finplat.kit.clock import pause
from finplat.ledger import service as ledger
from finplat.providers import sandbox_delivery
from finplat.providers.registry import Providers, build_providers
from finplat.provisioning import card_accounts
from finplat.reconciliation import service as reconciliation

log = structlog.get_logger("finplat.jobs")

MAINTENANCE_INTERVAL_SECONDS = 60.0
PROVISIONING_INTERVAL_SECONDS = 1.0


def webhook_worker(settings: Settings, factory: async_sessionmaker[AsyncSession]) -> WebhookWorker:
    return WebhookWorker(
        factory,
        allow_loopback=bool(settings.allow_loopback_webhooks),
        timeout=settings.webhook_timeout_seconds,
        lease=timedelta(seconds=settings.webhook_lease_seconds),
        batch_size=settings.webhook_batch_size,
    )


async def maintenance_once(factory: async_sessionmaker[AsyncSession]) -> dict[str, int]:
    async with unit_of_work(factory) as session:
        expired = await ledger.expire_due(session)
    async with unit_of_work(factory) as session:
        purged = await idempotency.purge_expired(session)
    async with unit_of_work(factory) as session:
        payees_expired = await payees.expire_unconfirmed(session)
    return {
        "expired_reservations": expired,
        "purged_idempotency_keys": purged,
        "expired_payees": payees_expired,
    }


async def _maintenance_loop(factory: async_sessionmaker[AsyncSession], stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            done = await maintenance_once(factory)
            if any(done.values()):
                log.info("maintenance", **done)
        except Exception as exc:  # keep the loop alive through a database hiccup
            log.error("maintenance_error", error_type=type(exc).__name__)
        await pause(stop, MAINTENANCE_INTERVAL_SECONDS)


async def run_background(
    settings: Settings, factory: async_sessionmaker[AsyncSession], stop: asyncio.Event
) -> None:
    worker = webhook_worker(settings, factory)
    providers = build_providers(settings, factory)
    loops = [
        worker.run_forever(stop, poll_seconds=settings.webhook_poll_seconds),
        _maintenance_loop(factory, stop),
        _provisioning_loop(factory, providers, stop),
        _reconciliation_loop(factory, providers, stop, settings.reconcile_interval_seconds),
    ]
    if settings.sandbox:
        loops.append(
            sandbox_delivery.run_forever(
                factory,
                secret=settings.provider_callback_secret,
                stop=stop,
                poll_seconds=settings.sandbox_callback_poll_seconds,
            )
        )
    await asyncio.gather(*loops)


async def _provisioning_loop(
    factory: async_sessionmaker[AsyncSession], providers: Providers, stop: asyncio.Event
) -> None:
    """Opens the card-provider accounts that identity approval unlocked."""
    while not stop.is_set():
        try:
            opened = await card_accounts.provision_waiting(factory, providers)
            if opened:
                log.info("provisioned", accounts=opened)
        except Exception as exc:  # keep the loop alive through a database hiccup
            log.error("provisioning_error", error_type=type(exc).__name__)
        await pause(stop, PROVISIONING_INTERVAL_SECONDS)


async def _reconciliation_loop(
    factory: async_sessionmaker[AsyncSession],
    providers: Providers,
    stop: asyncio.Event,
    interval_seconds: float,
) -> None:
    """Reconciles every company each interval (the first run one interval after start)."""
    while not stop.is_set():
        await pause(stop, interval_seconds)
        if stop.is_set():
            break
        try:
            reconciliation.log_report(await reconciliation.reconcile(factory, providers))
        except Exception as exc:  # keep the loop alive through a database hiccup
            log.error("reconciliation_error", error_type=type(exc).__name__)
