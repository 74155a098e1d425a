"""Sandbox crypto rail: transfers toward the card provider (USDC bought with a budget's fiat,
and crypto card loads on chain). Each is recorded once per key and stays `PENDING` until the
sandbox decides it (`settle_card_transfer`), which reports `card_transfer.updated`."""

from __future__ import annotations

import secrets
from datetime import datetime
from decimal import ROUND_DOWN

from sqlalchemy import BigInteger, Integer, String, UniqueConstraint, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId
from finplat.db.dialect import insert_ignoring_conflicts
from finplat.db.unit_of_work import unit_of_work
from finplat.kit.clock import utcnow
from finplat.providers.crypto.card_rails import (
    RailTransfer,
    RailTransferKind,
    RailTransferStatus,
)
from finplat.providers.crypto.port import ConversionQuote, Stablecoin
from finplat.providers.errors import ProviderRejected
from finplat.providers.sandbox.faults import FaultMode
from finplat.providers.sandbox.simulator import Simulator

OPERATIONS = (
    "quote_card_funding",
    "fund_card_provider",
    "send_card_load",
    "card_transfer_by_key",
    "settle_card_transfer",
)
CARD_TRANSFER_UPDATED = "card_transfer.updated"


class SandboxCardTransfer(Base):
    """A transfer toward the card provider, as the sandbox rail keeps it."""

    __tablename__ = "sandbox_crypto_card_transfers"
    __table_args__ = (UniqueConstraint("company_id", "idempotency_key"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    reference: Mapped[str] = mapped_column(String(64), unique=True)
    idempotency_key: Mapped[str] = mapped_column(String(128))
    kind: Mapped[str] = mapped_column(String(24))
    currency: Mapped[str] = mapped_column(String(8))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    chain_id: Mapped[int | None] = mapped_column(Integer, default=None)
    fiat_currency: Mapped[str | None] = mapped_column(String(8), default=None)
    fiat_amount_minor: Mapped[int | None] = mapped_column(BigInteger, default=None)
    source_budget_id: Mapped[str | None] = mapped_column(String(64), default=None)
    card_reference: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SandboxCardTransfers:
    """Mixed into the sandbox crypto rail (it provides `factory` and `sim`)."""

    factory: async_sessionmaker[AsyncSession]
    sim: Simulator

    async def quote_card_funding(
        self, *, company_id: int, fiat_currency: str, currency: str
    ) -> ConversionQuote:
        """Buying at the mid rate less the rail's spread (the sale's rates, `adapter`)."""
        from finplat.providers.crypto.sandbox import adapter  # it mixes this class in

        await self.sim.enter(company_id, "quote_card_funding")
        if currency not in Stablecoin.__members__ or fiat_currency not in adapter.FIATS:
            raise ProviderRejected(
                "The rail does not sell that pair.", status=400, code="PAIR_NOT_SUPPORTED"
            )
        mid = adapter.MID_RATES_USD[fiat_currency] / adapter.MID_RATES_USD[currency]
        rate = (mid * (1 - adapter.SPREAD)).quantize(adapter.RATE_PLACES, rounding=ROUND_DOWN)
        return ConversionQuote(currency, fiat_currency, rate, utcnow() + adapter.QUOTE_LIFETIME)

    async def fund_card_provider(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        fiat_currency: str,
        fiat_amount_minor: int,
        source_budget_id: str,
        currency: str,
        amount_minor: int,
        card_reference: str,
    ) -> RailTransfer:
        mode = await self.sim.enter(company_id, "fund_card_provider")
        row = await self._record(
            company_id,
            idempotency_key,
            kind=RailTransferKind.CARDPROV_FUNDING,
            currency=currency,
            amount_minor=amount_minor,
            fiat_currency=fiat_currency,
            fiat_amount_minor=fiat_amount_minor,
            source_budget_id=source_budget_id,
            card_reference=card_reference,
        )
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return _transfer(row)

    async def send_card_load(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        currency: str,
        chain_id: int,
        amount_minor: int,
        card_reference: str,
    ) -> RailTransfer:
        mode = await self.sim.enter(company_id, "send_card_load")
        row = await self._record(
            company_id,
            idempotency_key,
            kind=RailTransferKind.CARD_LOAD,
            currency=currency,
            amount_minor=amount_minor,
            chain_id=chain_id,
            card_reference=card_reference,
        )
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return _transfer(row)

    async def card_transfer_by_key(
        self, *, company_id: int, idempotency_key: str
    ) -> RailTransfer | None:
        await self.sim.enter(company_id, "card_transfer_by_key")
        async with unit_of_work(self.factory) as session:
            row = await _find(session, company_id, key=idempotency_key)
        return None if row is None else _transfer(row)

    async def settle_card_transfer(
        self, *, company_id: int, reference: str, completed: bool
    ) -> RailTransfer:
        await self.sim.enter(company_id, "settle_card_transfer")
        async with unit_of_work(self.factory) as session:
            row = await _find(session, company_id, reference=reference, lock=True)
            if row is None:
                raise ProviderRejected(
                    "No such transfer.", status=404, code="CARD_TRANSFER_NOT_FOUND"
                )
            if row.status == RailTransferStatus.PENDING.value:
                row.status = (
                    RailTransferStatus.COMPLETED if completed else RailTransferStatus.FAILED
                ).value
                await session.flush()
                await self.sim.emit_callback(
                    session,
                    company_id=company_id,
                    type_=CARD_TRANSFER_UPDATED,
                    data={
                        "reference": row.reference,
                        "idempotencyKey": row.idempotency_key,
                        "kind": row.kind,
                        "status": row.status,
                        "reason": None if completed else "The rail could not deliver it.",
                    },
                )
        return _transfer(row)

    async def _record(
        self,
        company_id: int,
        idempotency_key: str,
        *,
        kind: RailTransferKind,
        currency: str,
        amount_minor: int,
        card_reference: str,
        chain_id: int | None = None,
        fiat_currency: str | None = None,
        fiat_amount_minor: int | None = None,
        source_budget_id: str | None = None,
    ) -> SandboxCardTransfer:
        """Once per key: a repeated key answers the first transfer."""
        async with unit_of_work(self.factory) as session:
            await session.execute(
                insert_ignoring_conflicts(session, SandboxCardTransfer).values(
                    company_id=company_id,
                    reference=f"sbx_ctf_{secrets.token_hex(12)}",
                    idempotency_key=idempotency_key,
                    kind=kind.value,
                    currency=currency,
                    amount_minor=amount_minor,
                    chain_id=chain_id,
                    fiat_currency=fiat_currency,
                    fiat_amount_minor=fiat_amount_minor,
                    source_budget_id=source_budget_id,
                    card_reference=card_reference,
                    status=RailTransferStatus.PENDING.value,
                    created_at=utcnow(),
                )
            )
            row = await _find(session, company_id, key=idempotency_key)
            assert row is not None
        return row


async def _find(
    session: AsyncSession,
    company_id: int,
    *,
    key: str | None = None,
    reference: str | None = None,
    lock: bool = False,
) -> SandboxCardTransfer | None:
    stmt = select(SandboxCardTransfer).where(SandboxCardTransfer.company_id == company_id)
    if key is not None:
        stmt = stmt.where(SandboxCardTransfer.idempotency_key == key)
    if reference is not None:
        stmt = stmt.where(SandboxCardTransfer.reference == reference)
    if lock:
        stmt = stmt.with_for_update()
    return (await session.execute(stmt)).scalar_one_or_none()


def _transfer(row: SandboxCardTransfer) -> RailTransfer:
    return RailTransfer(row.reference, RailTransferKind(row.kind), RailTransferStatus(row.status))
