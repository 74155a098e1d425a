"""The pay-in addresses the crypto rail issued to users, as the platform keeps them."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned
from finplat.kit.clock import utcnow


class CryptoPayinAddress(CompanyOwned, Base):
    """One per (user, stablecoin, chain): a repeat request answers the same row. The address
    is stored in its canonical spelling (EIP-55 for the EVM chains), so a deposit reported in
    any letter case finds it."""

    __tablename__ = "crypto_payin_addresses"
    __table_args__ = (
        UniqueConstraint("company_id", "user_id", "currency", "chain_id"),
        UniqueConstraint("chain_id", "currency", "address"),
        Index("ix_crypto_payin_addresses_address", "address"),
    )

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("users.id", ondelete="CASCADE"))
    currency: Mapped[str] = mapped_column(String(8))
    chain_id: Mapped[int] = mapped_column(Integer)
    address: Mapped[str] = mapped_column(String(64))
    provider: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
