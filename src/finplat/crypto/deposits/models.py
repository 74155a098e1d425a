"""Transfers the crypto rail reported arriving at pay-in addresses, as the platform tracks them.

`PENDING` until the chain's finality threshold, then `CREDITED` (once: the credit and the
status change commit together under the row's lock); `REORGED` when the transfer left the
chain before that (nothing was credited); `UNSUPPORTED` when the token or the chain is not the
one the address was issued for: kept, never credited, for recovery.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class DepositStatus(StrEnum):
    PENDING = "PENDING"
    CREDITED = "CREDITED"
    REORGED = "REORGED"
    UNSUPPORTED = "UNSUPPORTED"


class CryptoDeposit(CompanyOwned, Timestamped, Base):
    __tablename__ = "crypto_deposits"
    __table_args__ = (
        UniqueConstraint("provider", "provider_deposit_id"),
        # The top-up job reads only the few deposits whose card top-up is not settled.
        Index(
            "ix_crypto_deposits_auto_topup_open",
            "auto_topup_status",
            postgresql_where=text("auto_topup_status IN ('DUE', 'CONVERTED')"),
            sqlite_where=text("auto_topup_status IN ('DUE', 'CONVERTED')"),
        ),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    # The address's holder; None only for an address the platform never issued.
    user_id: Mapped[int | None] = mapped_column(
        BigIntId, ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    provider: Mapped[str] = mapped_column(String(16))
    provider_deposit_id: Mapped[str] = mapped_column(String(64))
    tx_hash: Mapped[str] = mapped_column(String(100))
    address: Mapped[str] = mapped_column(String(64))
    chain_id: Mapped[int] = mapped_column(Integer)
    currency: Mapped[str] = mapped_column(String(16))  # the token as the rail reported it
    amount: Mapped[str] = mapped_column(String(48))  # exact decimal text, as on chain
    amount_minor: Mapped[int | None] = mapped_column(BigInteger)  # supported deposits only
    confirmations: Mapped[int] = mapped_column(Integer, default=0)
    required_confirmations: Mapped[int | None] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(String(200))
    credited_at: Mapped[datetime | None] = mapped_column(default=None)
    ledger_transfer_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    # The card's DEPOSIT auto top-up this deposit feeds (`finplat.crypto.deposits.topups`).
    auto_topup_card_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    auto_topup_status: Mapped[str | None] = mapped_column(String(16), default=None)
    auto_topup_amount_minor: Mapped[int | None] = mapped_column(BigInteger, default=None)  # USD
    auto_topup_order_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
