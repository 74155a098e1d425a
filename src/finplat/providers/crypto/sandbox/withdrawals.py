"""Sandbox crypto rail: withdrawals to external wallets, broadcast once per key (a repeated
key answers the first withdrawal), then confirmed or failed by the sandbox's chain
(`settle_withdrawal`), each change reported with `withdrawal.updated`."""

from __future__ import annotations

import secrets
from datetime import datetime

from sqlalchemy import BigInteger, Integer, String, UniqueConstraint, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId
from finplat.db.dialect import insert_ignoring_conflicts
from finplat.db.unit_of_work import unit_of_work
from finplat.kit.clock import utcnow
from finplat.providers.crypto.port import Chain
from finplat.providers.crypto.withdrawals import Withdrawal, WithdrawalStatus
from finplat.providers.errors import ProviderRejected
from finplat.providers.sandbox.faults import FaultMode
from finplat.providers.sandbox.simulator import Simulator

OPERATIONS = ("network_fee", "withdraw", "withdrawal_by_key", "settle_withdrawal")
WITHDRAWAL_UPDATED = "withdrawal.updated"
# What sending a stablecoin costs on each chain, in the coin's minor units (6 decimals): gas
# is dear on Ethereum, cheap on the others.
NETWORK_FEES: dict[int, int] = {
    Chain.ETHEREUM.value: 5_000_000,
    Chain.TRON.value: 1_000_000,
    Chain.POLYGON.value: 100_000,
    Chain.ARBITRUM.value: 300_000,
}


class SandboxWithdrawal(Base):
    """A withdrawal as the sandbox rail keeps it: one per (company, key)."""

    __tablename__ = "sandbox_crypto_withdrawals"
    __table_args__ = (UniqueConstraint("company_id", "idempotency_key"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    reference: Mapped[str] = mapped_column(String(64), unique=True)
    idempotency_key: Mapped[str] = mapped_column(String(128))
    currency: Mapped[str] = mapped_column(String(8))
    chain_id: Mapped[int] = mapped_column(Integer)
    address: Mapped[str] = mapped_column(String(64))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    tx_hash: Mapped[str] = mapped_column(String(100))
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


def _withdrawal(row: SandboxWithdrawal) -> Withdrawal:
    reason = "The chain reverted the transfer." if row.status == "FAILED" else None
    return Withdrawal(row.reference, WithdrawalStatus(row.status), row.tx_hash, reason)


class SandboxWithdrawals:
    """The withdrawal half of the sandbox crypto rail (mixed into `SandboxCryptoRail`)."""

    factory: async_sessionmaker[AsyncSession]
    sim: Simulator

    async def network_fee(self, *, company_id: int, currency: str, chain_id: int) -> int:
        await self.sim.enter(company_id, "network_fee")
        return NETWORK_FEES[chain_id]

    async def withdraw(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        currency: str,
        chain_id: int,
        address: str,
        amount_minor: int,
    ) -> Withdrawal:
        mode = await self.sim.enter(company_id, "withdraw")
        async with unit_of_work(self.factory) as session:
            await session.execute(
                insert_ignoring_conflicts(session, SandboxWithdrawal).values(
                    company_id=company_id,
                    reference=f"sbx_wdr_{secrets.token_hex(12)}",
                    idempotency_key=idempotency_key,
                    currency=currency,
                    chain_id=chain_id,
                    address=address,
                    amount_minor=amount_minor,
                    tx_hash=(
                        secrets.token_hex(32)
                        if chain_id == Chain.TRON.value
                        else "0x" + secrets.token_hex(32)
                    ),
                    status=WithdrawalStatus.BROADCAST.value,
                    created_at=utcnow(),
                )
            )
            row = await self._withdrawal(session, company_id, key=idempotency_key)
            assert row is not None
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return _withdrawal(row)

    async def withdrawal_by_key(
        self, *, company_id: int, idempotency_key: str
    ) -> Withdrawal | None:
        await self.sim.enter(company_id, "withdrawal_by_key")
        async with unit_of_work(self.factory) as session:
            row = await self._withdrawal(session, company_id, key=idempotency_key)
        return None if row is None else _withdrawal(row)

    async def broadcasts(self, *, company_id: int, idempotency_key: str) -> int:
        """How many withdrawals the rail holds for a key (tests: at most one)."""
        async with unit_of_work(self.factory) as session:
            stmt = select(SandboxWithdrawal.id).where(
                SandboxWithdrawal.company_id == company_id,
                SandboxWithdrawal.idempotency_key == idempotency_key,
            )
            return len((await session.execute(stmt)).all())

    async def settle_withdrawal(
        self, *, company_id: int, withdrawal_id: str, confirmed: bool
    ) -> Withdrawal:
        await self.sim.enter(company_id, "settle_withdrawal")
        async with unit_of_work(self.factory) as session:
            row = await self._withdrawal(session, company_id, reference=withdrawal_id, lock=True)
            if row is None:
                raise ProviderRejected(
                    "No such withdrawal.", status=404, code="WITHDRAWAL_NOT_FOUND"
                )
            if row.status == WithdrawalStatus.BROADCAST.value:
                row.status = (
                    WithdrawalStatus.CONFIRMED if confirmed else WithdrawalStatus.FAILED
                ).value
                await session.flush()
                answer = _withdrawal(row)
                await self.sim.emit_callback(
                    session,
                    company_id=company_id,
                    type_=WITHDRAWAL_UPDATED,
                    data={
                        "withdrawalId": row.reference,
                        "idempotencyKey": row.idempotency_key,
                        "status": row.status,
                        "txHash": row.tx_hash,
                        "reason": answer.reason,
                    },
                )
        return _withdrawal(row)

    async def _withdrawal(
        self,
        session: AsyncSession,
        company_id: int,
        *,
        key: str | None = None,
        reference: str | None = None,
        lock: bool = False,
    ) -> SandboxWithdrawal | None:
        stmt = select(SandboxWithdrawal).where(SandboxWithdrawal.company_id == company_id)
        if key is not None:
            stmt = stmt.where(SandboxWithdrawal.idempotency_key == key)
        if reference is not None:
            stmt = stmt.where(SandboxWithdrawal.reference == reference)
        if lock:
            stmt = stmt.with_for_update()
        return (await session.execute(stmt)).scalar_one_or_none()
