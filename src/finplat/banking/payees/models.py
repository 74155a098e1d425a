"""Payees: the people and companies a user pays out to.

A payee is created `PENDING_VERIFICATION` with a one-time verification token (stored only as
a hash) and becomes `ACTIVE` once the token is confirmed and the banking provider has
registered it. Only the last four characters of the account number or IBAN are kept for good;
the full account details are held in `pending_details` just long enough to register the payee
at the provider, and wiped as soon as the payee is registered, locked, expired or deleted.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class PayeeStatus(StrEnum):
    PENDING_VERIFICATION = "PENDING_VERIFICATION"  # waiting for the verification token
    ACTIVE = "ACTIVE"  # verified and registered at the provider: payouts may use it
    VERIFICATION_FAILED = "VERIFICATION_FAILED"  # too many wrong tokens: locked for good
    EXPIRED = "EXPIRED"  # the token expired before it was confirmed
    DELETED = "DELETED"  # removed by the user (soft delete)


class Payee(CompanyOwned, Timestamped, Base):
    __tablename__ = "banking_payees"
    __table_args__ = (
        Index("ix_banking_payees_company_user", "company_id", "user_id", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)  # pye_ + 24 hex
    user_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    provider: Mapped[str] = mapped_column(String(16))
    account_id: Mapped[str] = mapped_column(String(64))  # the user's provider account
    name: Mapped[str] = mapped_column(String(100))
    payment_type: Mapped[str] = mapped_column(String(16))
    payment_method: Mapped[str] = mapped_column(String(32))
    currency: Mapped[str] = mapped_column(String(8))
    account_number_last4: Mapped[str] = mapped_column(String(4))
    bic: Mapped[str | None] = mapped_column(String(11), default=None)
    bank_name: Mapped[str | None] = mapped_column(String(100), default=None)
    bank_country: Mapped[str | None] = mapped_column(String(2), default=None)
    comments: Mapped[str | None] = mapped_column(String(500), default=None)
    status: Mapped[str] = mapped_column(String(32))
    # SHA-256 of the payee id and the token; None once the payee is no longer pending.
    token_hash: Mapped[str | None] = mapped_column(String(64), default=None)
    token_expires_at: Mapped[datetime]
    verification_attempts: Mapped[int] = mapped_column(Integer, default=0)
    # Set when the right token was presented; registration at the provider may still be due
    # (after a provider timeout), and a retry completes it even past the token's expiry.
    token_accepted_at: Mapped[datetime | None] = mapped_column(default=None)
    # Full account details (IBAN / account number, sort code) until the provider has them.
    pending_details: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    provider_payee_id: Mapped[str | None] = mapped_column(String(64), default=None)
    verified_at: Mapped[datetime | None] = mapped_column(default=None)
    deleted_at: Mapped[datetime | None] = mapped_column(default=None)
