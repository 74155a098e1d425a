"""Background work: webhook delivery, maintenance (expire reservations, purge keys, reseal
stored secrets after a key rotation) and reconciliation with the providers, the card blocks
the card provider has not confirmed, and what follows a purchase the provider's real-time
request decided (its decline fee, its auto top-up).

Runs inside `finplat serve` (unless `--no-worker`) and as `finplat worker`; any number of
copies may run against one PostgreSQL database.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from datetime import timedelta

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.banking.payees import service as payees
from finplat.cards.funding import provider_blocks
from finplat.cards.transactions import follow_up as card_purchase_follow_ups
from finplat.cards.transactions import service as card_transactions
from finplat.companies import service as companies
from finplat.config import Settings
from finplat.crypto.cardloads import service as crypto_card_loads
from finplat.crypto.deposits import topups as crypto_topups
from finplat.crypto.withdrawals import service as crypto_withdrawals
from finplat.db.unit_of_work import unit_of_work
from finplat.events.worker import WebhookWorker
from finplat.idempotency import service as idempotency
from finplat.kit.clock import pause
from finplat.ledger import service as ledger
from finplat.partner_hosted import configuration as partner_hosted
from finplat.partner_hosted.outbox import PartnerDeliveryWorker
from finplat.payments.requests import service as payment_requests
from finplat.providers.registry import Providers, build_providers
from finplat.providers.sandbox import delivery as sandbox_delivery
from finplat.provisioning import card_accounts
from finplat.reconciliation import service as reconciliation
from finplat.referrals import accrual as referral_accrual
from finplat.vouchers.redemptions import service as voucher_redemptions

log = structlog.get_logger("finplat.jobs")

MAINTENANCE_INTERVAL_SECONDS = 60.0
PROVISIONING_INTERVAL_SECONDS = 1.0
CARD_BLOCK_INTERVAL_SECONDS = 5.0
CARD_FOLLOW_UP_INTERVAL_SECONDS = 1.0
CRYPTO_TOPUP_INTERVAL_SECONDS = 5.0
CRYPTO_WITHDRAWAL_INTERVAL_SECONDS = 30.0
REFERRAL_INTERVAL_SECONDS = 5.0


def webhook_worker(settings: Settings, factory: async_sessionmaker[AsyncSession]) -> WebhookWorker:
    return WebhookWorker(
        factory,
        allow_loopback=bool(settings.allow_loopback_webhooks),
        timeout=settings.webhook_timeout_seconds,
        lease=timedelta(seconds=settings.webhook_lease_seconds),
        batch_size=settings.webhook_batch_size,
    )


def partner_worker(
    settings: Settings, factory: async_sessionmaker[AsyncSession]
) -> PartnerDeliveryWorker:
    """Sends partner-hosted companies' partners their reversals, clearings, refunds and
    adjustments, with the webhooks' timeout, lease, batch and retry schedule."""
    return PartnerDeliveryWorker(
        factory,
        allow_loopback=bool(settings.allow_loopback_webhooks),
        timeout=settings.webhook_timeout_seconds,
        lease=timedelta(seconds=settings.webhook_lease_seconds),
        batch_size=settings.webhook_batch_size,
    )


async def maintenance_once(
    factory: async_sessionmaker[AsyncSession],
    *,
    card_hold_expiry: timedelta = card_transactions.DEFAULT_HOLD_EXPIRY,
) -> dict[str, int]:
    async with unit_of_work(factory) as session:
        expired = await ledger.expire_due(session)
    holds_expired = await card_transactions.expire_holds(factory, older_than=card_hold_expiry)
    async with unit_of_work(factory) as session:
        purged = await idempotency.purge_expired(session)
    async with unit_of_work(factory) as session:
        payees_expired = await payees.expire_unconfirmed(session)
    async with unit_of_work(factory) as session:
        resealed = await companies.reseal_secrets(session)
        resealed += await partner_hosted.reseal_api_keys(session)
    async with unit_of_work(factory) as session:
        requests_expired = await payment_requests.expire_due(session)
    async with unit_of_work(factory) as session:
        redemptions_expired = await voucher_redemptions.expire_due(session)
    return {
        "expired_reservations": expired,
        "expired_card_holds": holds_expired,
        "purged_idempotency_keys": purged,
        "expired_payees": payees_expired,
        "resealed_secrets": resealed,
        "expired_payment_requests": requests_expired,
        "expired_voucher_redemptions": redemptions_expired,
    }


async def _every(
    stop: asyncio.Event,
    interval_seconds: float,
    step: Callable[[], Awaitable[dict[str, int]]],
    *,
    done: str,
    failed: str,
) -> None:
    """Run `step` every interval until `stop`, logging what it did (when it did anything)."""
    while not stop.is_set():
        try:
            counts = await step()
            if any(counts.values()):
                log.info(done, **counts)
        except Exception as exc:  # keep the loop alive through a database hiccup
            log.error(failed, error_type=type(exc).__name__)
        await pause(stop, interval_seconds)


def _maintenance_loop(
    factory: async_sessionmaker[AsyncSession], stop: asyncio.Event, hold_expiry: timedelta
) -> Coroutine[None, None, None]:
    return _every(
        stop,
        MAINTENANCE_INTERVAL_SECONDS,
        lambda: maintenance_once(factory, card_hold_expiry=hold_expiry),
        done="maintenance",
        failed="maintenance_error",
    )


def _provisioning_loop(
    factory: async_sessionmaker[AsyncSession], providers: Providers, stop: asyncio.Event
) -> Coroutine[None, None, None]:
    """Opens the card-provider accounts that identity approval unlocked."""

    async def step() -> dict[str, int]:
        return {"accounts": await card_accounts.provision_waiting(factory, providers)}

    return _every(
        stop, PROVISIONING_INTERVAL_SECONDS, step, done="provisioned", failed="provisioning_error"
    )


def _crypto_topup_loop(
    factory: async_sessionmaker[AsyncSession], providers: Providers, stop: asyncio.Event
) -> Coroutine[None, None, None]:
    """Runs the card deposit auto top-ups that credited crypto deposits feed."""

    async def step() -> dict[str, int]:
        return {
            "deposits": await crypto_topups.run_due(factory, providers, company_id=None),
            "cardLoads": await crypto_card_loads.credit_due(factory, providers, company_id=None),
        }

    return _every(
        stop,
        CRYPTO_TOPUP_INTERVAL_SECONDS,
        step,
        done="crypto_topups_settled",
        failed="crypto_topup_error",
    )


def _crypto_withdrawal_loop(
    factory: async_sessionmaker[AsyncSession], providers: Providers, stop: asyncio.Event
) -> Coroutine[None, None, None]:
    """Expires wallet withdrawals whose code was not given, sends those past cooling-off."""

    async def step() -> dict[str, int]:
        return {"withdrawals": await crypto_withdrawals.run_due(factory, providers)}

    return _every(
        stop,
        CRYPTO_WITHDRAWAL_INTERVAL_SECONDS,
        step,
        done="crypto_withdrawals_moved",
        failed="crypto_withdrawal_error",
    )


def _card_block_loop(
    factory: async_sessionmaker[AsyncSession], providers: Providers, stop: asyncio.Event
) -> Coroutine[None, None, None]:
    """Repeats the decline-fee blocks the card provider has not confirmed."""

    async def step() -> dict[str, int]:
        return {"cards": await provider_blocks.confirm_pending(factory, providers)}

    return _every(
        stop,
        CARD_BLOCK_INTERVAL_SECONDS,
        step,
        done="card_blocks_settled",
        failed="card_block_error",
    )


def _card_follow_up_loop(
    factory: async_sessionmaker[AsyncSession], providers: Providers, stop: asyncio.Event
) -> Coroutine[None, None, None]:
    """Charges the decline fees and runs the auto top-ups of purchases decided on the card
    provider's real-time request (which answers before them)."""

    async def step() -> dict[str, int]:
        return {"purchases": await card_purchase_follow_ups.run_due(factory, providers)}

    return _every(
        stop,
        CARD_FOLLOW_UP_INTERVAL_SECONDS,
        step,
        done="card_purchases_followed_up",
        failed="card_purchase_follow_up_error",
    )


def _referral_loop(
    factory: async_sessionmaker[AsyncSession], stop: asyncio.Event
) -> Coroutine[None, None, None]:
    """Gives the referral rewards of friends' top-ups, claws back, releases holds."""
    return _every(
        stop,
        REFERRAL_INTERVAL_SECONDS,
        lambda: referral_accrual.run_once(factory),
        done="referral_rewards",
        failed="referral_rewards_error",
    )


async def run_background(
    settings: Settings, factory: async_sessionmaker[AsyncSession], stop: asyncio.Event
) -> None:
    worker = webhook_worker(settings, factory)
    providers = build_providers(settings, factory)
    loops = [
        worker.run_forever(stop, poll_seconds=settings.webhook_poll_seconds),
        partner_worker(settings, factory).run_forever(
            stop, poll_seconds=settings.webhook_poll_seconds
        ),
        _maintenance_loop(factory, stop, timedelta(days=settings.card_hold_expiry_days)),
        _provisioning_loop(factory, providers, stop),
        _card_block_loop(factory, providers, stop),
        _card_follow_up_loop(factory, providers, stop),
        _crypto_topup_loop(factory, providers, stop),
        _crypto_withdrawal_loop(factory, providers, stop),
        _referral_loop(factory, stop),
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
