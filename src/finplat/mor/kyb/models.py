from __future__ import annotations

from datetime import datetime

from sqlalchemy import Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class MorKyb(CompanyOwned, Timestamped, Base):
    """The MOR merchant's KYB (one per company): the banking provider's application of the
    latest submission, its status and what was last sent."""

    __tablename__ = "mor_kyb"
    __table_args__ = (UniqueConstraint("company_id"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    provider_application_id: Mapped[str] = mapped_column(String(40), index=True)
    status: Mapped[str] = mapped_column(String(32))
    submissions: Mapped[int] = mapped_column(Integer, default=0)
    # The last submitted body (JSON, as the MorKybRequest dumps it).
    submitted: Mapped[str] = mapped_column(Text)
    submitted_at: Mapped[datetime] = mapped_column()
    # Why the provider rejected it or what it asks for, as it said (None otherwise).
    reason: Mapped[str | None] = mapped_column(String(500), default=None)
