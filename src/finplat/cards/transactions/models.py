"""A purchase with a card (one provider authorization id) and the provider events that moved
it. The running totals are kept on the purchase so every event, in whatever order it arrives,
settles the ledger from them (`finplat.cards.transactions.purchase`)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, String, Text, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class CardTransaction(CompanyOwned, Timestamped, Base):
    __tablename__ = "card_transactions"
    __table_args__ = (
        UniqueConstraint("company_id", "provider", "authorization_id"),
        Index("ix_card_transactions_company_card", "company_id", "card_id", "id"),
        # The expiry job reads only the purchases still holding money.
        Index("ix_card_transactions_held", "held_minor", "authorized_at"),
        # The follow-up job reads only the few purchases whose follow-up has not run.
        Index(
            "ix_card_transactions_follow_up",
            "follow_up_at",
            postgresql_where=text("follow_up_at IS NOT NULL"),
            sqlite_where=text("follow_up_at IS NOT NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    card_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("cards.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(BigIntId)
    provider: Mapped[str] = mapped_column(String(16))
    # The provider's id of the purchase: every event of the purchase carries it.
    authorization_id: Mapped[str] = mapped_column(String(64))
    currency: Mapped[str] = mapped_column(String(8))
    merchant: Mapped[str | None] = mapped_column(String(100), default=None)
    mcc: Mapped[str | None] = mapped_column(String(4), default=None)
    country: Mapped[str | None] = mapped_column(String(2), default=None)
    # The acquirer's merchant id (MID) when the network sent it: loyalty matches on it.
    mid: Mapped[str | None] = mapped_column(String(32), default=None)
    status: Mapped[str] = mapped_column(String(16))
    requested_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    # Running totals of the events received (each counted once).
    authorized_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    incremented_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    reversed_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    cleared_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    refunded_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    declined: Mapped[bool] = mapped_column(Boolean, default=False)
    expired: Mapped[bool] = mapped_column(Boolean, default=False)
    # What the ledger holds for it now (a pending debit of the card) and under which transfer.
    held_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    hold_transfer_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    decline_reason: Mapped[str | None] = mapped_column(String(32), default=None)
    response_code: Mapped[str | None] = mapped_column(String(4), default=None)
    rules_fired: Mapped[str] = mapped_column(Text, default="[]")  # JSON list
    authorized_at: Mapped[datetime | None] = mapped_column(default=None)
    # Partner-hosted balances: who decided (`PARTNER`, `STAND_IN` when the fallback did,
    # `PROVIDER` when the provider authorized without asking); None when the money is in
    # finplat's ledger. Such a purchase moves nothing in the ledger: its money is at the partner.
    partner_decision: Mapped[str | None] = mapped_column(String(16), default=None)
    # Decided on the provider's real-time request: when its decline fee and auto top-up are
    # due to run (`follow_up`; None once they ran, or for a purchase that has none).
    follow_up_at: Mapped[datetime | None] = mapped_column(default=None)


class CardTransactionEvent(CompanyOwned, Base):
    """One provider event of a purchase, applied once (unique per provider event id)."""

    __tablename__ = "card_transaction_events"
    __table_args__ = (UniqueConstraint("company_id", "provider", "provider_event_id"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    card_transaction_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("card_transactions.id", ondelete="CASCADE"), index=True
    )
    provider: Mapped[str] = mapped_column(String(16))
    provider_event_id: Mapped[str] = mapped_column(String(64))
    type: Mapped[str] = mapped_column(String(16))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    decline_reason: Mapped[str | None] = mapped_column(String(32), default=None)
    # As the provider sent it (ISO 8601, Unix seconds or milliseconds), parsed when read.
    occurred_at: Mapped[str | None] = mapped_column(String(40), default=None)
    received_at: Mapped[datetime] = mapped_column()
