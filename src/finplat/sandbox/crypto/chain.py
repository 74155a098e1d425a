"""Sandbox: what happens on chain, through the rail's simulator and the same callback path a
real rail's notification takes (`deposit.updated`, delivered at once)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.crypto.addresses.service import NO_CRYPTO
from finplat.crypto.deposits import service as deposits
from finplat.crypto.deposits import topups
from finplat.crypto.deposits.models import CryptoDeposit
from finplat.errors import ApiError, Conflict
from finplat.providers.calls import commit_then_call
from finplat.providers.crypto.port import ChainDeposit, SandboxChainSimulation
from finplat.providers.registry import Providers, configured
from finplat.providers.sandbox import delivery as sandbox_delivery


class DepositNotYetApplied(ApiError):
    """The rail saw the change; its notification is still queued and the background delivery
    will apply it."""

    status = 503
    code = "PROVIDER_CALLBACK_PENDING"
    message = (
        "The sandbox rail recorded the change, but the platform has not applied its "
        "notification yet; it will shortly. List the user's deposits to see it."
    )


def _simulator(providers: Providers) -> SandboxChainSimulation:
    rail = configured(providers.crypto, NO_CRYPTO)
    if not isinstance(rail, SandboxChainSimulation):
        raise Conflict("The crypto rail cannot simulate chain activity.")
    return rail


async def _on_chain(
    session: AsyncSession,
    providers: Providers,
    factory: async_sessionmaker[AsyncSession],
    *,
    secret: str,
    company_id: int,
    operation: str,
    call: Callable[[SandboxChainSimulation], Awaitable[ChainDeposit]],
) -> CryptoDeposit:
    rail = _simulator(providers)
    seen = await commit_then_call(
        session,
        providers.policy,
        provider=configured(providers.crypto, NO_CRYPTO).name,
        operation=operation,
        call=lambda: call(rail),
        idempotent=False,
    )
    await sandbox_delivery.deliver_due(factory, secret=secret, company_id=company_id)
    # What the background job does next, at once, as the callbacks above.
    await topups.run_due(factory, providers, company_id=company_id)
    found = await deposits.by_provider_id(
        session,
        company_id=company_id,
        provider=configured(providers.crypto, NO_CRYPTO).name,
        provider_id=seen.deposit_id,
    )
    if found is None:
        raise DepositNotYetApplied()
    return found


async def send(
    session: AsyncSession,
    providers: Providers,
    factory: async_sessionmaker[AsyncSession],
    *,
    secret: str,
    company_id: int,
    address: str,
    token: str,
    chain_id: int,
    amount: Decimal,
    confirmations: int,
) -> CryptoDeposit:
    """A transfer to an address the rail issued, with `confirmations` blocks on it already."""
    text = format(amount, "f")
    return await _on_chain(
        session,
        providers,
        factory,
        secret=secret,
        company_id=company_id,
        operation="simulate_deposit",
        call=lambda rail: rail.simulate_deposit(
            company_id=company_id,
            address=address,
            token=token,
            chain_id=chain_id,
            amount=text,
            confirmations=confirmations,
        ),
    )


async def add_blocks(
    session: AsyncSession,
    providers: Providers,
    factory: async_sessionmaker[AsyncSession],
    *,
    secret: str,
    company_id: int,
    deposit: CryptoDeposit,
    blocks: int,
) -> CryptoDeposit:
    provider_id = deposit.provider_deposit_id
    return await _on_chain(
        session,
        providers,
        factory,
        secret=secret,
        company_id=company_id,
        operation="add_blocks",
        call=lambda rail: rail.add_blocks(
            company_id=company_id, deposit_id=provider_id, blocks=blocks
        ),
    )


async def reorganise(
    session: AsyncSession,
    providers: Providers,
    factory: async_sessionmaker[AsyncSession],
    *,
    secret: str,
    company_id: int,
    deposit: CryptoDeposit,
) -> CryptoDeposit:
    provider_id = deposit.provider_deposit_id
    return await _on_chain(
        session,
        providers,
        factory,
        secret=secret,
        company_id=company_id,
        operation="reorganise",
        call=lambda rail: rail.reorganise(company_id=company_id, deposit_id=provider_id),
    )
