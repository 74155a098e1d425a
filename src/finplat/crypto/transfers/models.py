"""The crypto flows' business record. A transfer that depends on a provider starts `PENDING`
with its ledger reservation and the key the provider was given, and becomes `COMPLETED` or
`FAILED` exactly once, together with posting or voiding that reservation."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import BigInteger, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class TransferKind(StrEnum):
    BANKPROV_DEPOSIT = "BANKPROV_DEPOSIT"  # crypto sold, fiat paid to a banking budget
    WALLET_WITHDRAWAL = "WALLET_WITHDRAWAL"  # coins sent to an external wallet
    BANKPROV_TO_CARDPROV = "BANKPROV_TO_CARDPROV"  # a budget's fiat buys USDC for the card
    CARDPROV_TO_BANKPROV = "CARDPROV_TO_BANKPROV"  # a card's USD unloaded, sold into a budget


class TransferStatus(StrEnum):
    PENDING_VERIFICATION = "PENDING_VERIFICATION"  # a withdrawal waiting for its one-time code
    COOLING_OFF = "COOLING_OFF"  # a withdrawal to a new address, held until its release time
    PENDING = "PENDING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    EXPIRED = "EXPIRED"  # a withdrawal whose code was not given in time; released


class CryptoTransfer(CompanyOwned, Timestamped, Base):
    __tablename__ = "crypto_transfers"
    __table_args__ = (UniqueConstraint("provider", "provider_key"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[str] = mapped_column(String(24))
    status: Mapped[str] = mapped_column(String(24))
    provider: Mapped[str] = mapped_column(String(16))
    provider_key: Mapped[str] = mapped_column(String(128))
    provider_reference: Mapped[str | None] = mapped_column(String(64), default=None)
    currency: Mapped[str] = mapped_column(String(8))  # the stablecoin debited
    amount_minor: Mapped[int] = mapped_column(BigInteger)  # debited, fee included
    fee_minor: Mapped[int] = mapped_column(BigInteger)  # in `currency`
    rate: Mapped[str | None] = mapped_column(String(32), default=None)
    fiat_currency: Mapped[str | None] = mapped_column(String(8), default=None)
    fiat_amount_minor: Mapped[int | None] = mapped_column(BigInteger, default=None)
    budget_id: Mapped[str | None] = mapped_column(String(32), default=None)
    quote_id: Mapped[str | None] = mapped_column(String(32), default=None)
    ledger_pending_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    reason: Mapped[str | None] = mapped_column(String(200), default=None)
    completed_at: Mapped[datetime | None] = mapped_column(default=None)
