"""Sandbox crypto rail: hands out deposit addresses in each chain's own address format, and
watches them: a transfer to one is reported with `deposit.updated` as it gets blocks on top of
it, and again if a reorganisation drops it (see `finplat.providers.crypto.port`)."""

from __future__ import annotations

import secrets
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db.dialect import insert_ignoring_conflicts
from finplat.db.unit_of_work import unit_of_work
from finplat.providers.crypto import addresses
from finplat.providers.crypto.port import (
    Chain,
    ChainDeposit,
    ChainDepositStatus,
    DepositAddress,
    Stablecoin,
)
from finplat.providers.crypto.sandbox.models import SandboxChainDeposit, SandboxDepositAddress
from finplat.providers.errors import ProviderRejected
from finplat.providers.names import ExternalProvider
from finplat.providers.sandbox.faults import FaultMode
from finplat.providers.sandbox.simulator import Simulator

OPERATIONS = ("deposit_address", "simulate_deposit", "add_blocks", "reorganise")
DEPOSIT_UPDATED = "deposit.updated"


def new_address(chain: Chain) -> str:
    """A fresh account in the chain's own format, checksum included."""
    return addresses.encode(chain, secrets.token_bytes(addresses.ACCOUNT_BYTES))


def _stored_spelling(address: str) -> str:
    """EVM addresses are case-insensitive on chain: find them in their checksummed form."""
    if addresses.is_evm_address(address):
        return addresses.eip55(bytes.fromhex(address[2:]))
    return address


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

    # ------------------------------------------------------------------ chain simulation

    async def simulate_deposit(
        self,
        *,
        company_id: int,
        address: str,
        token: str,
        chain_id: int,
        amount: str,
        confirmations: int,
    ) -> ChainDeposit:
        """A transfer of `amount` `token` on `chain_id` to an address this rail issued (for
        any pair: what arrives on chain is not up to the rail)."""
        await self.sim.enter(company_id, "simulate_deposit")
        spelling = _stored_spelling(address)
        on_tron = chain_id == Chain.TRON.value
        if on_tron != addresses.is_tron_address(spelling) or not (
            on_tron or addresses.is_evm_address(spelling)
        ):
            raise ProviderRejected(
                "The address cannot receive on that chain.",
                status=400,
                code="ADDRESS_NOT_ON_CHAIN",
                validation_errors={"ChainId": ["The address is not in this chain's format."]},
            )
        async with unit_of_work(self.factory) as session:
            issued = (
                await session.execute(
                    select(SandboxDepositAddress.id).where(
                        SandboxDepositAddress.company_id == company_id,
                        SandboxDepositAddress.address == spelling,
                    )
                )
            ).first()
            if issued is None:
                raise ProviderRejected(
                    "The rail issued no such address.", status=404, code="ADDRESS_NOT_FOUND"
                )
            row = SandboxChainDeposit(
                company_id=company_id,
                reference=f"sbx_dep_{secrets.token_hex(12)}",
                tx_hash=("" if on_tron else "0x") + secrets.token_hex(32),
                address=spelling,
                chain_id=chain_id,
                token=token,
                amount=amount,
                confirmations=confirmations,
                status=ChainDepositStatus.SEEN.value,
            )
            session.add(row)
            await session.flush()
            await self._report(session, row)
        return _deposit(row)

    async def add_blocks(self, *, company_id: int, deposit_id: str, blocks: int) -> ChainDeposit:
        await self.sim.enter(company_id, "add_blocks")
        async with unit_of_work(self.factory) as session:
            row = await self._locked(session, company_id, deposit_id)
            if row.status == ChainDepositStatus.SEEN.value:
                row.confirmations += blocks
                await session.flush()
                await self._report(session, row)
        return _deposit(row)

    async def reorganise(self, *, company_id: int, deposit_id: str) -> ChainDeposit:
        """The chain reorganises and the transfer's block is no longer on it."""
        await self.sim.enter(company_id, "reorganise")
        async with unit_of_work(self.factory) as session:
            row = await self._locked(session, company_id, deposit_id)
            if row.status == ChainDepositStatus.SEEN.value:
                row.status = ChainDepositStatus.DROPPED.value
                row.confirmations = 0
                await session.flush()
                await self._report(session, row)
        return _deposit(row)

    async def _locked(
        self, session: AsyncSession, company_id: int, deposit_id: str
    ) -> SandboxChainDeposit:
        stmt = (
            select(SandboxChainDeposit)
            .where(
                SandboxChainDeposit.company_id == company_id,
                SandboxChainDeposit.reference == deposit_id,
            )
            .with_for_update()
        )
        row = (await session.execute(stmt)).scalar_one_or_none()
        if row is None:
            raise ProviderRejected("No such deposit.", status=404, code="DEPOSIT_NOT_FOUND")
        return row

    async def _report(self, session: AsyncSession, row: SandboxChainDeposit) -> None:
        await self.sim.emit_callback(
            session, company_id=row.company_id, type_=DEPOSIT_UPDATED, data=_payload(row)
        )


def _deposit(row: SandboxChainDeposit) -> ChainDeposit:
    return ChainDeposit(
        deposit_id=row.reference,
        tx_hash=row.tx_hash,
        address=row.address,
        chain_id=row.chain_id,
        token=row.token,
        amount=row.amount,
        confirmations=row.confirmations,
        status=ChainDepositStatus(row.status),
    )


def _payload(row: SandboxChainDeposit) -> dict[str, Any]:
    return {
        "depositId": row.reference,
        "txHash": row.tx_hash,
        "address": row.address,
        "chainId": row.chain_id,
        "token": row.token,
        "amount": row.amount,
        "confirmations": row.confirmations,
        "status": row.status,
    }
