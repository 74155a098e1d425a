"""The sandbox crypto rails: deposit addresses per chain, idempotent, fault-injectable."""

from __future__ import annotations

from collections.abc import Awaitable

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.providers.calls import CallPolicy, commit_then_call
from finplat.providers.crypto.port import Chain, DepositAddress, Stablecoin
from finplat.providers.crypto.sandbox.adapter import SandboxCryptoRail
from finplat.providers.errors import ProviderTimeout
from finplat.providers.sandbox import faults
from finplat.providers.sandbox.faults import FaultMode
from tests.conftest import Tenant

POLICY = CallPolicy(timeout_seconds=0.5, retries=2, backoff_seconds=0)


async def test_same_reference_currency_and_chain_get_the_same_address(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    rail = SandboxCryptoRail(session_factory)
    first = await rail.deposit_address(
        company_id=tenant.company_id, reference="u-1", currency=Stablecoin.USDC, chain=Chain.POLYGON
    )
    again = await rail.deposit_address(
        company_id=tenant.company_id, reference="u-1", currency=Stablecoin.USDC, chain=Chain.POLYGON
    )
    assert first == again


@pytest.mark.parametrize(
    ("chain", "prefix", "length"),
    [(Chain.ETHEREUM, "0x", 42), (Chain.ARBITRUM, "0x", 42), (Chain.TRON, "T", 34)],
)
async def test_addresses_have_their_chains_format(
    session_factory: async_sessionmaker[AsyncSession],
    tenant: Tenant,
    chain: Chain,
    prefix: str,
    length: int,
) -> None:
    rail = SandboxCryptoRail(session_factory)
    address = await rail.deposit_address(
        company_id=tenant.company_id, reference="u-2", currency=Stablecoin.USDT, chain=chain
    )
    assert address.address.startswith(prefix)
    assert len(address.address) == length


async def test_timed_out_call_is_a_provider_timeout_and_retry_finds_the_address(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    rail = SandboxCryptoRail(session_factory)
    async with session_factory() as session:
        await faults.set_fault(
            session,
            company_id=tenant.company_id,
            provider="crypto",
            operation="deposit_address",
            mode=FaultMode.TIMEOUT,
            count=1,
        )
        await session.commit()

    def call() -> Awaitable[DepositAddress]:
        return rail.deposit_address(
            company_id=tenant.company_id,
            reference="u-3",
            currency=Stablecoin.USDC,
            chain=Chain.ETHEREUM,
        )

    with pytest.raises(ProviderTimeout):
        await commit_then_call(
            None,
            POLICY,
            provider="crypto",
            operation="deposit_address",
            call=call,
            idempotent=True,
        )
    retried = await commit_then_call(
        None,
        POLICY,
        provider="crypto",
        operation="deposit_address",
        call=call,
        idempotent=True,
    )
    direct = await rail.deposit_address(
        company_id=tenant.company_id,
        reference="u-3",
        currency=Stablecoin.USDC,
        chain=Chain.ETHEREUM,
    )
    assert retried == direct
