"""Payout approvals: the user's confirmation of one payout's exact terms and price.

A payout is created only against a `VERIFIED` approval whose terms equal the request's
(spec: "the unified payouts route needs its existing verified approval for API-key callers").
The payout itself is a `PAYOUT` transaction (`finplat.transactions`); its provider details
live in the transaction's metadata.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class ApprovalStatus(StrEnum):
    AWAITING_VERIFICATION = "AWAITING_VERIFICATION"  # the user has yet to confirm the token
    VERIFIED = "VERIFIED"  # confirmed: one payout with exactly these terms may be created
    USED = "USED"  # a payout was created with it
    FAILED = "FAILED"  # too many wrong tokens: locked for good
    EXPIRED = "EXPIRED"  # reported once `expires_at` passed unused (never stored)


class PayoutApproval(CompanyOwned, Timestamped, Base):
    __tablename__ = "banking_payout_approvals"
    __table_args__ = (Index("ix_banking_payout_approvals_company_user", "company_id", "user_id"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)  # pap_ + 24 hex
    user_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    # The approved terms, exactly as the payout must repeat them.
    account_id: Mapped[str] = mapped_column(String(64))
    budget_id: Mapped[str] = mapped_column(String(32))
    payee_id: Mapped[str] = mapped_column(String(32))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(8))
    debit_currency: Mapped[str] = mapped_column(String(8))
    reference: Mapped[str | None] = mapped_column(String(140), default=None)
    # The price the user approved.
    debit_amount_minor: Mapped[int] = mapped_column(BigInteger)
    fee_minor: Mapped[int] = mapped_column(BigInteger)
    rate: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(32))
    # SHA-256 of the approval id and the one-time token; never the token itself.
    token_hash: Mapped[str] = mapped_column(String(64))
    failed_attempts: Mapped[int] = mapped_column(Integer, default=0)
    expires_at: Mapped[datetime]
    verified_at: Mapped[datetime | None] = mapped_column(default=None)
    used_at: Mapped[datetime | None] = mapped_column(default=None)
    # The payout (transaction) created with it.
    transaction_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
