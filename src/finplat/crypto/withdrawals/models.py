"""What a wallet withdrawal keeps beyond its crypto transfer (`crypto_transfers`, kind
`WALLET_WITHDRAWAL`, the same id): the destination, the one-time code's keyed hash with its
expiry and wrong tries, the cooling-off release time, the network fee's own ledger
reservation and the transaction hash."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class CryptoWalletWithdrawal(CompanyOwned, Timestamped, Base):
    __tablename__ = "crypto_wallet_withdrawals"
    __table_args__ = (
        Index("ix_crypto_wallet_withdrawals_destination", "user_id", "chain_id", "address"),
    )

    transfer_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("crypto_transfers.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("users.id", ondelete="CASCADE"))
    chain_id: Mapped[int] = mapped_column(Integer)
    address: Mapped[str] = mapped_column(String(64))  # canonical spelling for the chain
    # HMAC-SHA-256 (server key) of the transfer id and the code; never the code itself.
    code_hash: Mapped[str] = mapped_column(String(64))
    code_expires_at: Mapped[datetime] = mapped_column()
    failed_attempts: Mapped[int] = mapped_column(Integer, default=0)
    verified_at: Mapped[datetime | None] = mapped_column(default=None)
    release_at: Mapped[datetime | None] = mapped_column(default=None)  # cooling-off end
    fee_pending_id: Mapped[int] = mapped_column(BigInteger)
    tx_hash: Mapped[str | None] = mapped_column(String(100), default=None)
