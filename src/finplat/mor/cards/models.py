"""Who uses a MOR card (its assignment history) and what a card's user asks the merchant to
load onto it (load requests). The card itself is the cards domain's `Card`."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, String, text
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class MorCardAssignment(CompanyOwned, Timestamped, Base):
    """One period in which a user of the company is a card's assignee; `unassigned_at` is
    null while it lasts. A card with no row at all is its holder's (it was ordered for them
    outside the MOR routes)."""

    __tablename__ = "mor_card_assignments"
    __table_args__ = (
        Index("ix_mor_card_assignments_card", "company_id", "card_id", "id"),
        Index("ix_mor_card_assignments_user", "company_id", "user_id", "unassigned_at"),
        # At most one open assignment per card, whatever races the card's lock missed.
        Index(
            "ux_mor_card_assignments_open",
            "card_id",
            unique=True,
            postgresql_where=text("unassigned_at IS NULL"),
            sqlite_where=text("unassigned_at IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    card_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("cards.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("users.id", ondelete="CASCADE"))
    assigned_at: Mapped[datetime] = mapped_column()
    unassigned_at: Mapped[datetime | None] = mapped_column(default=None)


class MorLoadRequest(CompanyOwned, Timestamped, Base):
    __tablename__ = "mor_load_requests"
    __table_args__ = (Index("ix_mor_load_requests_company", "company_id", "status", "id"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("users.id", ondelete="CASCADE"))
    card_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("cards.id", ondelete="CASCADE"))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(8))
    note: Mapped[str | None] = mapped_column(String(500), default=None)
    # PENDING | APPROVED (decided, loading) | FUNDED | DECLINED | FAILED | CANCELLED
    status: Mapped[str] = mapped_column(String(16))
    decline_reason: Mapped[str | None] = mapped_column(String(500), default=None)
    failure_code: Mapped[str | None] = mapped_column(String(64), default=None)
    funding_id: Mapped[int | None] = mapped_column(BigIntId, default=None)
    decided_at: Mapped[datetime | None] = mapped_column(default=None)
