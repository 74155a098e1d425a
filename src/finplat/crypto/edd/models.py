"""That a user's EDD answers were stored with the verification provider, and when. The
answers themselves live with the provider only."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped

SUBMITTED = "SUBMITTED"


class CryptoEdd(CompanyOwned, Timestamped, Base):
    __tablename__ = "crypto_edd_submissions"
    __table_args__ = (UniqueConstraint("company_id", "user_id"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("users.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(16))
    applicant_id: Mapped[str] = mapped_column(String(64))
    submitted_at: Mapped[datetime] = mapped_column()
