"""The sandbox verification provider's own state."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import BigInteger, Date, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId
from finplat.kit.clock import utcnow


class SandboxApplicant(Base):
    __tablename__ = "sandbox_identity_applicants"
    __table_args__ = (UniqueConstraint("company_id", "reference"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    applicant_id: Mapped[str] = mapped_column(String(64), unique=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    reference: Mapped[str] = mapped_column(String(64))
    level_name: Mapped[str] = mapped_column(String(64))
    first_name: Mapped[str] = mapped_column(String(100))
    last_name: Mapped[str] = mapped_column(String(100))
    email: Mapped[str] = mapped_column(String(320))
    date_of_birth: Mapped[date] = mapped_column(Date)
    country: Mapped[str] = mapped_column(String(3))
    nationality: Mapped[str | None] = mapped_column(String(3), default=None)
    # The provider's record of the applicant's tax id (a US SSN is stored here as `tin`).
    tin: Mapped[str | None] = mapped_column(String(16), default=None)
    questionnaire: Mapped[str] = mapped_column(Text, default="{}")
    # init -> pending (documents submitted) -> completed (reviewed)
    review_status: Mapped[str] = mapped_column(String(16), default="init")
    review_answer: Mapped[str | None] = mapped_column(String(8), default=None)
    reject_type: Mapped[str | None] = mapped_column(String(8), default=None)
    source: Mapped[str | None] = mapped_column(String(16), default=None)
    document_type: Mapped[str | None] = mapped_column(String(32), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class SandboxAccessToken(Base):
    """Hosted-link, SDK and share tokens; only their SHA-256 is kept."""

    __tablename__ = "sandbox_identity_tokens"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    kind: Mapped[str] = mapped_column(String(8))
    applicant_id: Mapped[str] = mapped_column(String(64), index=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
