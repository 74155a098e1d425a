"""Voucher settings: the platform's (one row) and each company's (one row per company).

A column left NULL is not set at that level: a company inherits the platform's value, and the
platform its built-in default (`finplat.vouchers.settings.service.DEFAULTS`), so a company
with no row of its own follows the platform as it changes.
"""

from __future__ import annotations

from sqlalchemy import JSON, Boolean, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class VoucherSettingsColumns:
    enabled: Mapped[bool | None] = mapped_column(Boolean, default=None)
    shutdown_mode: Mapped[str | None] = mapped_column(String(16), default=None)
    low_balance_warning_percentage: Mapped[int | None] = mapped_column(Integer, default=None)
    verification_ttl_minutes: Mapped[int | None] = mapped_column(Integer, default=None)
    default_requires_approval: Mapped[bool | None] = mapped_column(Boolean, default=None)
    daily_report_recipients: Mapped[list[str] | None] = mapped_column(JSON, default=None)
    maximum_batch_size: Mapped[int | None] = mapped_column(Integer, default=None)
    maximum_import_rows: Mapped[int | None] = mapped_column(Integer, default=None)
    maximum_mass_assignment_size: Mapped[int | None] = mapped_column(Integer, default=None)


class VoucherGlobalSettings(VoucherSettingsColumns, Timestamped, Base):
    """The platform operator's settings: a single row, id 1."""

    __tablename__ = "voucher_global_settings"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True)


class VoucherCompanySettings(VoucherSettingsColumns, CompanyOwned, Timestamped, Base):
    """A company's own settings; `card_provider_enabled` is the card provider's switch for the
    company (`InterlaceEnabled` on the wire), set by the platform operator."""

    __tablename__ = "voucher_company_settings"
    __table_args__ = (UniqueConstraint("company_id"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    card_provider_enabled: Mapped[bool | None] = mapped_column(Boolean, default=None)
