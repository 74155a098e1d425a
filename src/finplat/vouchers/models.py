"""Voucher groups and the vouchers issued into them.

A voucher's code is never stored: only its SHA-256 hash (the code carries 100 random bits, so
a fast hash cannot be reversed by guessing) and a masked form for people to tell codes apart.
Use counts and values are kept on the voucher row and changed only by conditional UPDATEs
(`finplat.vouchers.repository`), so limits hold under any number of parallel redemptions:
`ReservedUses`/`ReservedValue` are what started redemptions hold until they complete or
expire, `SuccessfulUses`/`RedeemedValue` what completed ones took.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, CompanyOwned, Timestamped


class VoucherGroup(CompanyOwned, Timestamped, Base):
    __tablename__ = "voucher_groups"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)  # a UUID
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(String(1000), default=None)
    status: Mapped[str] = mapped_column(String(16))
    default_type: Mapped[str] = mapped_column(String(32))
    default_currency: Mapped[str | None] = mapped_column(String(8), default=None)
    default_value_minor: Mapped[int | None] = mapped_column(BigInteger, default=None)
    default_per_user_limit: Mapped[int | None] = mapped_column(Integer, default=None)
    default_total_use_limit: Mapped[int | None] = mapped_column(Integer, default=None)
    default_aggregate_cap_minor: Mapped[int | None] = mapped_column(BigInteger, default=None)
    default_requires_approval: Mapped[bool] = mapped_column(Boolean)
    default_requires_email_2fa: Mapped[bool] = mapped_column(Boolean)
    default_valid_from: Mapped[datetime | None] = mapped_column(default=None)
    default_valid_until: Mapped[datetime | None] = mapped_column(default=None)
    campaign_reference: Mapped[str | None] = mapped_column(String(100), default=None)
    cost_centre: Mapped[str | None] = mapped_column(String(100), default=None)
    tags: Mapped[list[str]] = mapped_column(JSON, default=list)


class Voucher(CompanyOwned, Timestamped, Base):
    __tablename__ = "vouchers"
    __table_args__ = (Index("ix_vouchers_company_created", "company_id", "created_at", "id"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)  # a UUID
    group_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("voucher_groups.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(String(1000), default=None)
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    masked_code: Mapped[str] = mapped_column(String(40))
    type: Mapped[str] = mapped_column(String(32))
    currency: Mapped[str] = mapped_column(String(8))
    value_minor: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16))
    per_user_limit: Mapped[int | None] = mapped_column(Integer, default=None)
    maximum_total_uses: Mapped[int | None] = mapped_column(Integer, default=None)
    maximum_aggregate_value_minor: Mapped[int | None] = mapped_column(BigInteger, default=None)
    successful_uses: Mapped[int] = mapped_column(Integer, default=0)
    reserved_uses: Mapped[int] = mapped_column(Integer, default=0)
    redeemed_value_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    reserved_value_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    requires_whitelabel_approval: Mapped[bool] = mapped_column(Boolean)
    requires_email_2fa: Mapped[bool] = mapped_column(Boolean)
    valid_from: Mapped[datetime | None] = mapped_column(default=None)
    valid_until: Mapped[datetime | None] = mapped_column(default=None)
