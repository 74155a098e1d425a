"""Sandbox crypto rails: hands out deposit addresses in each chain's own address format."""

from __future__ import annotations

import secrets

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db.dialect import insert_ignoring_conflicts
from finplat.db.unit_of_work import unit_of_work
from finplat.providers.crypto import addresses
from finplat.providers.crypto.port import Chain, DepositAddress, Stablecoin
from finplat.providers.crypto.sandbox.models import SandboxDepositAddress
from finplat.providers.names import ExternalProvider
from finplat.providers.sandbox.faults import FaultMode
from finplat.providers.sandbox.simulator import Simulator

OPERATIONS = ("deposit_address",)


def new_address(chain: Chain) -> str:
    """A fresh account in the chain's own format, checksum included."""
    return addresses.encode(chain, secrets.token_bytes(addresses.ACCOUNT_BYTES))


class SandboxCryptoRail:
    name = ExternalProvider.CRYPTO.value

    def __init__(self, factory: async_sessionmaker[AsyncSession], *, latency_ms: int = 0) -> None:
        self.factory = factory
        self.sim = Simulator(factory, provider=self.name, latency_ms=latency_ms)

    async def deposit_address(
        self, *, company_id: int, reference: str, currency: Stablecoin, chain: Chain
    ) -> DepositAddress:
        mode = await self.sim.enter(company_id, "deposit_address")
        async with unit_of_work(self.factory) as session:
            # One address per (reference, currency, chain) even when requests race.
            await session.execute(
                insert_ignoring_conflicts(session, SandboxDepositAddress).values(
                    company_id=company_id,
                    reference=reference,
                    currency=currency.value,
                    chain_id=chain.value,
                    address=new_address(chain),
                )
            )
            stmt = select(SandboxDepositAddress.address).where(
                SandboxDepositAddress.company_id == company_id,
                SandboxDepositAddress.reference == reference,
                SandboxDepositAddress.currency == currency.value,
                SandboxDepositAddress.chain_id == chain.value,
            )
            address = DepositAddress((await session.execute(stmt)).scalar_one(), currency, chain)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return address
