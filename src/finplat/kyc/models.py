from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class KycSubmission(CompanyOwned, Timestamped, Base):
    """A user's identity verification with the verification provider.

    One per user: the user's one KYC method is fixed by the first request (hosted link, mobile
    SDK, reusable identity or manual payload); later requests of the same method continue it.
    """

    __tablename__ = "kyc_submissions"
    __table_args__ = (UniqueConstraint("company_id", "user_id"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("users.id", ondelete="CASCADE"))
    method: Mapped[str] = mapped_column(String(32))
    applicant_id: Mapped[str] = mapped_column(String(64), index=True)
    level_name: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(32))
    review_reason: Mapped[str | None] = mapped_column(String(200), default=None)
    reviewed_at: Mapped[datetime | None] = mapped_column(default=None)
