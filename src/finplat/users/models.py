from __future__ import annotations

from datetime import date

from sqlalchemy import Date, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class User(CompanyOwned, Timestamped, Base):
    __tablename__ = "users"
    __table_args__ = (UniqueConstraint("company_id", "external_user_id"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    external_user_id: Mapped[str] = mapped_column(String(255))
    email: Mapped[str] = mapped_column(String(320))
    first_name: Mapped[str] = mapped_column(String(100))
    last_name: Mapped[str] = mapped_column(String(100))
    phone: Mapped[str] = mapped_column(String(20))
    account_type: Mapped[str] = mapped_column(String(16))
    date_of_birth: Mapped[date] = mapped_column(Date)
    address: Mapped[str | None] = mapped_column(String(200), default=None)
    city: Mapped[str | None] = mapped_column(String(100), default=None)
    country: Mapped[str] = mapped_column(String(2))
    zip_code: Mapped[str | None] = mapped_column(String(20), default=None)
    status: Mapped[str] = mapped_column(String(32))
    kyc_status: Mapped[str] = mapped_column(String(32))
    tier_id: Mapped[int | None] = mapped_column(
        BigIntId, ForeignKey("tiers.id", ondelete="RESTRICT"), default=None
    )
