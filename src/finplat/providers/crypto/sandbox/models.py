from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId
from finplat.kit.clock import utcnow


class SandboxDepositAddress(Base):
    __tablename__ = "sandbox_crypto_addresses"
    __table_args__ = (UniqueConstraint("company_id", "reference", "currency", "chain_id"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    reference: Mapped[str] = mapped_column(String(64))
    currency: Mapped[str] = mapped_column(String(8))
    chain_id: Mapped[int] = mapped_column(Integer)
    address: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SandboxChainDeposit(Base):
    """A token transfer the sandbox rail saw on a chain to an address it issued, with the
    blocks built on it so far. `DROPPED` is a transfer a reorganisation took off the chain."""

    __tablename__ = "sandbox_crypto_deposits"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger, index=True)
    reference: Mapped[str] = mapped_column(String(64), unique=True)
    tx_hash: Mapped[str] = mapped_column(String(100))
    address: Mapped[str] = mapped_column(String(64))
    chain_id: Mapped[int] = mapped_column(Integer)
    token: Mapped[str] = mapped_column(String(16))
    amount: Mapped[str] = mapped_column(String(48))  # exact decimal text, as on chain
    confirmations: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SandboxConversion(Base):
    """A sale of stablecoins for fiat paid to a budget, as the sandbox rail keeps it."""

    __tablename__ = "sandbox_crypto_conversions"
    __table_args__ = (UniqueConstraint("company_id", "idempotency_key"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    reference: Mapped[str] = mapped_column(String(64), unique=True)
    idempotency_key: Mapped[str] = mapped_column(String(128))
    currency: Mapped[str] = mapped_column(String(8))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    fiat_currency: Mapped[str] = mapped_column(String(8))
    fiat_amount_minor: Mapped[int] = mapped_column(BigInteger)
    destination_budget_id: Mapped[str] = mapped_column(String(64))
    # `CoinSource`: coins from custody, or sent by the card provider for this sale.
    source: Mapped[str] = mapped_column(String(16), default="custody", server_default="custody")
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
