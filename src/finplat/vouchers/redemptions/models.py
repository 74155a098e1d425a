"""Voucher redemptions, and each user's uses of each voucher.

A redemption holds a reservation on its voucher (one use, its value) and on the user's uses
from the moment it starts until it completes (the reservation becomes a use), fails, expires
or is rejected (the reservation is released). Which of these happens is decided by one
conditional UPDATE of the redemption's status, so a reservation is released or used once.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class RedemptionStatus(StrEnum):
    PENDING_VERIFICATION = "PENDING_VERIFICATION"  # waits for the one-time code
    PENDING_APPROVAL = "PENDING_APPROVAL"  # verified; waits for the company's approval
    PROCESSING = "PROCESSING"  # the card is being credited; the provider's answer is due
    COMPLETED = "COMPLETED"  # the card was credited
    FAILED = "FAILED"  # `ErrorCode` says why; the reservation was released
    EXPIRED = "EXPIRED"  # the code was not verified in time; the reservation was released
    REJECTED = "REJECTED"  # the company refused it; the reservation was released


HOLDING = (RedemptionStatus.PENDING_VERIFICATION, RedemptionStatus.PENDING_APPROVAL)


class VoucherRedemption(CompanyOwned, Timestamped, Base):
    __tablename__ = "voucher_redemptions"
    __table_args__ = (
        Index("ix_voucher_redemptions_company_created", "company_id", "created_at", "id"),
        Index("ix_voucher_redemptions_voucher_status", "voucher_id", "status"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)  # a UUID
    voucher_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("vouchers.id", ondelete="CASCADE")
    )
    user_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("users.id", ondelete="CASCADE"))
    card_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("cards.id", ondelete="CASCADE"))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(8))
    status: Mapped[str] = mapped_column(String(24))
    error_code: Mapped[str | None] = mapped_column(String(64), default=None)
    # SHA-256 of the redemption id and its one-time code; never the code itself.
    code_hash: Mapped[str | None] = mapped_column(String(64), default=None)
    failed_attempts: Mapped[int] = mapped_column(Integer, default=0)
    expires_at: Mapped[datetime | None] = mapped_column(default=None)
    # The card top-up that credits the voucher: its provider key (known before it is made)
    # and, once completed, its id (`TransactionReference`).
    funding_key: Mapped[str | None] = mapped_column(String(64), default=None)
    funding_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    completed_at: Mapped[datetime | None] = mapped_column(default=None)


class VoucherUserUses(CompanyOwned, Base):
    """How often one user has redeemed one voucher, and how many of their redemptions of it
    hold a reservation: the per-user limit's counter."""

    __tablename__ = "voucher_user_uses"
    __table_args__ = (UniqueConstraint("voucher_id", "user_id"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    voucher_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("vouchers.id", ondelete="CASCADE")
    )
    user_id: Mapped[int] = mapped_column(BigIntId)
    uses: Mapped[int] = mapped_column(Integer, default=0)
    reserved: Mapped[int] = mapped_column(Integer, default=0)
