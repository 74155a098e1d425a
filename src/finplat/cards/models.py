"""Cards as the platform knows them: who holds them, which product and provider, their status
and the ledger account that mirrors their balance. Never the full card number or the CVV:
only the masked number the provider returned (at most the first six and last four digits)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    String,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from finplat.cards.errors import CardCancelled
from finplat.cards.status import CardStatus
from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class Card(CompanyOwned, Timestamped, Base):
    __tablename__ = "cards"
    __table_args__ = (
        Index("ix_cards_company_user", "company_id", "user_id", "id"),
        UniqueConstraint("company_id", "provider", "provider_key"),
        # The block job reads only the few cards waiting for the provider.
        Index(
            "ix_cards_provider_block_pending",
            "provider_block_pending",
            postgresql_where=text("provider_block_pending"),
            sqlite_where=text("provider_block_pending"),
        ),
        # Room on each page, so that the frequent status and balance updates stay in place.
        {"postgresql_with": {"fillfactor": 80}},
    )

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    card_product_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("card_products.id", ondelete="RESTRICT")
    )
    tier_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("tiers.id", ondelete="RESTRICT"))
    provider: Mapped[str] = mapped_column(String(16))
    # The key the provider was given to issue it: finds the card after a lost answer.
    provider_key: Mapped[str] = mapped_column(String(64))
    provider_card_id: Mapped[str | None] = mapped_column(String(64), default=None, index=True)
    external_card_id: Mapped[str | None] = mapped_column(String(255), default=None)
    nickname: Mapped[str | None] = mapped_column(String(100), default=None)
    card_type: Mapped[str] = mapped_column(String(16))  # VIRTUAL | PHYSICAL
    status: Mapped[str] = mapped_column(String(24))
    currency: Mapped[str] = mapped_column(String(8))
    auto_lock_enabled: Mapped[bool] = mapped_column(Boolean, default=False)
    budget_id: Mapped[str | None] = mapped_column(String(32), default=None)  # bankprov cards
    masked_number: Mapped[str | None] = mapped_column(String(19), default=None)
    last4: Mapped[str | None] = mapped_column(String(4), default=None)
    expiry_month: Mapped[int | None] = mapped_column(default=None)
    expiry_year: Mapped[int | None] = mapped_column(default=None)
    phone: Mapped[str] = mapped_column(String(20))
    delivery_address: Mapped[str | None] = mapped_column(Text, default=None)  # JSON
    design_id: Mapped[str | None] = mapped_column(String(64), default=None)
    # Mirrors the balance the provider holds for the card (never negative).
    ledger_account_id: Mapped[int | None] = mapped_column(
        BigIntId, ForeignKey("ledger_accounts.id", ondelete="RESTRICT"), default=None
    )
    # The balance the provider last reported (issue, top-ups, unloads, controls), persisted so
    # a card the provider no longer lists still shows it; shown only for a card without a
    # ledger account (`service.views`): purchases move the account, not this.
    last_balance_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    outstanding_fee_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    # Blocked locally for an unpaid decline fee, the provider's block not yet confirmed
    # (`cards.provider_blocks`).
    provider_block_pending: Mapped[bool] = mapped_column(
        Boolean, default=False, server_default=false()
    )
    pin_set: Mapped[bool] = mapped_column(Boolean, default=False)
    # The provider's time (`updated_at`) of the last control answer applied to the card
    # (`funding.take_control_answer`).
    provider_seen_at: Mapped[datetime | None] = mapped_column(default=None)
    shipped_at: Mapped[datetime | None] = mapped_column(default=None)
    activated_at: Mapped[datetime | None] = mapped_column(default=None)
    cancelled_at: Mapped[datetime | None] = mapped_column(default=None)

    @property
    def held_by_decline_fee(self) -> bool:
        """Blocked by the platform for an unpaid decline fee. Only the fee's payment lifts
        such a block (`funding.unblock`): not a provider's answer to a control that was in
        flight when the block came, nor a status the provider reports."""
        return self.status == CardStatus.SYSTEM_BLOCKED and self.outstanding_fee_minor > 0

    def refuse_if_cancelled(self) -> None:
        """A cancelled card accepts no further money movement or control (the spec's card
        states: `CANCELLED` is final)."""
        if self.status == CardStatus.CANCELLED:
            raise CardCancelled()

    def take_provider_status(self, reported: CardStatus) -> bool:
        """The status the provider answered or reported becomes the card's, except over a
        decline-fee block: that stands (a provider's `CANCELLED` still applies), and the card
        is flagged so the block job makes the provider agree. `CANCELLED` is final: nothing
        the provider says afterwards moves the card again. Whether the status changed."""
        if self.status == CardStatus.CANCELLED:
            return False
        if self.held_by_decline_fee and reported != CardStatus.CANCELLED:
            self.provider_block_pending = True
            return False
        changed = self.status != reported.value
        self.status = reported.value
        return changed
