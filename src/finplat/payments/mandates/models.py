"""A mandate: a user authorises the company to collect from one of their budgets, at most
`MaxAmount` per period of its frequency (a one-time mandate: once, at most `MaxAmount`).

Statuses and transitions (`MandateStatusV2`):
* `PENDING` -> `ACTIVE` when the banking provider reports the account holder's authorisation,
  `PENDING` -> `FAILED` when it was refused;
* `PENDING` or `ACTIVE` -> `CANCELLED` by the cancel operation;
* `PENDING` or `ACTIVE` -> `EXPIRED` once its `EndDate` has passed.
`FAILED`, `CANCELLED` and `EXPIRED` are final.
"""

from __future__ import annotations

from datetime import date, datetime
from enum import StrEnum

from sqlalchemy import BigInteger, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class MandateFrequencyV2(StrEnum):
    ONE_TIME = "ONE_TIME"  # one collection in its whole life
    WEEKLY = "WEEKLY"  # ISO weeks, Monday to Sunday (UTC)
    MONTHLY = "MONTHLY"  # calendar months (UTC)
    YEARLY = "YEARLY"  # calendar years (UTC)


class MandateStatusV2(StrEnum):
    PENDING = "PENDING"
    ACTIVE = "ACTIVE"
    CANCELLED = "CANCELLED"
    EXPIRED = "EXPIRED"
    FAILED = "FAILED"


FINAL_MANDATE_STATUSES = frozenset(
    {MandateStatusV2.CANCELLED, MandateStatusV2.EXPIRED, MandateStatusV2.FAILED}
)


class PaymentMandate(CompanyOwned, Timestamped, Base):
    __tablename__ = "payment_mandates"
    __table_args__ = (Index("ix_payment_mandates_company_user", "company_id", "user_id"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)  # mdt_ + 24 hex
    user_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    budget_id: Mapped[str] = mapped_column(String(32))
    currency: Mapped[str] = mapped_column(String(8))
    max_amount_minor: Mapped[int] = mapped_column(BigInteger)
    frequency: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    description: Mapped[str | None] = mapped_column(String(140), default=None)
    external_reference_id: Mapped[str | None] = mapped_column(String(64), default=None)
    start_date: Mapped[date]
    end_date: Mapped[date | None] = mapped_column(default=None)
    provider: Mapped[str] = mapped_column(String(16))
    provider_mandate_id: Mapped[str] = mapped_column(String(64), unique=True)
    failure_reason: Mapped[str | None] = mapped_column(String(64), default=None)
    # The period whose allowance was last granted in the ledger (see `collections.allowance`).
    allowance_period: Mapped[str | None] = mapped_column(String(16), default=None)
    activated_at: Mapped[datetime | None] = mapped_column(default=None)
    cancelled_at: Mapped[datetime | None] = mapped_column(default=None)
