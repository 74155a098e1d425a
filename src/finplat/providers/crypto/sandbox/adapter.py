"""Sandbox crypto rail: hands out deposit addresses in each chain's own address format, and
watches them: a transfer to one is reported with `deposit.updated` as it gets blocks on top of
it, and again if a reorganisation drops it (see `finplat.providers.crypto.port`)."""

from __future__ import annotations

import secrets
from datetime import timedelta
from decimal import ROUND_DOWN, Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db.dialect import insert_ignoring_conflicts
from finplat.db.unit_of_work import unit_of_work
from finplat.kit.clock import utcnow
from finplat.providers.crypto import addresses
from finplat.providers.crypto.port import (
    Chain,
    ChainDeposit,
    ChainDepositStatus,
    CoinSource,
    Conversion,
    ConversionQuote,
    ConversionStatus,
    DepositAddress,
    Stablecoin,
)
from finplat.providers.crypto.sandbox import card_transfers, custody
from finplat.providers.crypto.sandbox.card_transfers import SandboxCardTransfers
from finplat.providers.crypto.sandbox.custody import SandboxCustody
from finplat.providers.crypto.sandbox.models import (
    SandboxChainDeposit,
    SandboxConversion,
    SandboxDepositAddress,
)
from finplat.providers.crypto.sandbox.withdrawals import SandboxWithdrawals
from finplat.providers.errors import ProviderRejected
from finplat.providers.names import ExternalProvider
from finplat.providers.sandbox.faults import FaultMode
from finplat.providers.sandbox.simulator import Simulator

OPERATIONS = (
    "deposit_address",
    "simulate_deposit",
    "add_blocks",
    "reorganise",
    "quote_conversion",
    "convert",
    "conversion_by_key",
    "settle_conversion",
    *card_transfers.OPERATIONS,
    *custody.OPERATIONS,
)
DEPOSIT_UPDATED = "deposit.updated"
CONVERSION_UPDATED = "conversion.updated"
# Mid-market value of one unit in USD, and the rail's spread on a sale.
MID_RATES_USD: dict[str, Decimal] = {
    "EUR": Decimal("1.08"),
    "GBP": Decimal("1.27"),
    "USD": Decimal(1),
    "USDC": Decimal(1),
    "USDT": Decimal(1),
}
FIATS = ("EUR", "GBP", "USD")
SPREAD = Decimal("0.0025")
RATE_PLACES = Decimal("0.00000001")
QUOTE_LIFETIME = timedelta(seconds=30)


def new_address(chain: Chain) -> str:
    """A fresh account in the chain's own format, checksum included."""
    return addresses.encode(chain, secrets.token_bytes(addresses.ACCOUNT_BYTES))


def _stored_spelling(address: str) -> str:
    """EVM addresses are case-insensitive on chain: find them in their checksummed form."""
    if addresses.is_evm_address(address):
        return addresses.eip55(bytes.fromhex(address[2:]))
    return address


class SandboxCryptoRail(SandboxWithdrawals, SandboxCardTransfers, SandboxCustody):
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
            # An address the rail issued is in some chain's format; a transfer can only reach
            # it on a chain of that format (a state of the address, not a malformed request).
            if on_tron != addresses.is_tron_address(spelling):
                raise ProviderRejected(
                    "The address cannot receive on that chain.",
                    status=409,
                    code="ADDRESS_NOT_ON_CHAIN",
                    validation_errors={"ChainId": ["The address is not in this chain's format."]},
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

    # ------------------------------------------------------------------ conversions

    async def quote_conversion(
        self, *, company_id: int, currency: str, fiat_currency: str
    ) -> ConversionQuote:
        await self.sim.enter(company_id, "quote_conversion")
        if currency not in Stablecoin.__members__ or fiat_currency not in FIATS:
            raise ProviderRejected(
                "The rail does not sell that pair.", status=400, code="PAIR_NOT_SUPPORTED"
            )
        mid = MID_RATES_USD[currency] / MID_RATES_USD[fiat_currency]
        rate = (mid * (1 - SPREAD)).quantize(RATE_PLACES, rounding=ROUND_DOWN)
        return ConversionQuote(currency, fiat_currency, rate, utcnow() + QUOTE_LIFETIME)

    async def convert(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        currency: str,
        amount_minor: int,
        fiat_currency: str,
        fiat_amount_minor: int,
        destination_budget_id: str,
        source: CoinSource = CoinSource.CUSTODY,
    ) -> Conversion:
        """Starts the sale once per key: a repeated key answers the first conversion."""
        mode = await self.sim.enter(company_id, "convert")
        async with unit_of_work(self.factory) as session:
            await session.execute(
                insert_ignoring_conflicts(session, SandboxConversion).values(
                    company_id=company_id,
                    reference=f"sbx_cnv_{secrets.token_hex(12)}",
                    idempotency_key=idempotency_key,
                    currency=currency,
                    amount_minor=amount_minor,
                    fiat_currency=fiat_currency,
                    fiat_amount_minor=fiat_amount_minor,
                    destination_budget_id=destination_budget_id,
                    source=source.value,
                    status=ConversionStatus.PENDING.value,
                    created_at=utcnow(),
                )
            )
            row = await self._conversion(session, company_id, key=idempotency_key)
            assert row is not None
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return _conversion(row)

    async def conversion_by_key(
        self, *, company_id: int, idempotency_key: str
    ) -> Conversion | None:
        await self.sim.enter(company_id, "conversion_by_key")
        async with unit_of_work(self.factory) as session:
            row = await self._conversion(session, company_id, key=idempotency_key)
        return None if row is None else _conversion(row)

    async def settle_conversion(
        self, *, company_id: int, conversion_id: str, completed: bool
    ) -> Conversion:
        await self.sim.enter(company_id, "settle_conversion")
        async with unit_of_work(self.factory) as session:
            row = await self._conversion(session, company_id, reference=conversion_id, lock=True)
            if row is None:
                raise ProviderRejected(
                    "No such conversion.", status=404, code="CONVERSION_NOT_FOUND"
                )
            if row.status == ConversionStatus.PENDING.value:
                row.status = (
                    ConversionStatus.COMPLETED if completed else ConversionStatus.FAILED
                ).value
                await session.flush()
                await self.sim.emit_callback(
                    session,
                    company_id=company_id,
                    type_=CONVERSION_UPDATED,
                    data={
                        "conversionId": row.reference,
                        "idempotencyKey": row.idempotency_key,
                        "status": row.status,
                        "reason": None if completed else "The rail could not sell the coins.",
                    },
                )
        return _conversion(row)

    async def _conversion(
        self,
        session: AsyncSession,
        company_id: int,
        *,
        key: str | None = None,
        reference: str | None = None,
        lock: bool = False,
    ) -> SandboxConversion | None:
        stmt = select(SandboxConversion).where(SandboxConversion.company_id == company_id)
        if key is not None:
            stmt = stmt.where(SandboxConversion.idempotency_key == key)
        if reference is not None:
            stmt = stmt.where(SandboxConversion.reference == reference)
        if lock:
            stmt = stmt.with_for_update()
        return (await session.execute(stmt)).scalar_one_or_none()

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


def _conversion(row: SandboxConversion) -> Conversion:
    return Conversion(row.reference, ConversionStatus(row.status))


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
