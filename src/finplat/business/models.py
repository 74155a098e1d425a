from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import Date, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class BusinessApplication(CompanyOwned, Timestamped, Base):
    """A business user's onboarding application with the banking provider (one per user)."""

    __tablename__ = "business_applications"
    __table_args__ = (UniqueConstraint("company_id", "user_id"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("users.id", ondelete="CASCADE"))
    provider_application_id: Mapped[str] = mapped_column(String(40), index=True)
    status: Mapped[str] = mapped_column(String(32))
    market: Mapped[str] = mapped_column(String(2))
    business_type: Mapped[str] = mapped_column(String(64))
    country_of_incorporation: Mapped[str | None] = mapped_column(String(2), default=None)
    registered_name: Mapped[str] = mapped_column(String(200))
    registration_number: Mapped[str] = mapped_column(String(64))
    business_overview: Mapped[str | None] = mapped_column(String(2000), default=None)
    industry_main: Mapped[str | None] = mapped_column(String(100), default=None)
    industry_sub: Mapped[str | None] = mapped_column(String(100), default=None)
    employee_count: Mapped[int | None] = mapped_column(Integer, default=None)
    incorporation_date: Mapped[date | None] = mapped_column(Date, default=None)
    website: Mapped[str | None] = mapped_column(String(2048), default=None)
    # The compliance requirements as last sent (JSON), None until sent.
    compliance_requirements: Mapped[str | None] = mapped_column(Text, default=None)
    # The banking provider's account, once the application is approved.
    account_id: Mapped[str | None] = mapped_column(String(40), default=None)
    submissions: Mapped[int] = mapped_column(Integer, default=0)


class AssociatedPerson(CompanyOwned, Timestamped, Base):
    """A director, ultimate beneficial owner or shareholder named on an application."""

    __tablename__ = "business_associated_people"
    __table_args__ = (UniqueConstraint("application_id", "email"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    application_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("business_applications.id", ondelete="CASCADE"), index=True
    )
    provider_person_id: Mapped[str] = mapped_column(String(40), index=True)
    first_name: Mapped[str] = mapped_column(String(100))
    last_name: Mapped[str] = mapped_column(String(100))
    email: Mapped[str] = mapped_column(String(320))
    role: Mapped[str] = mapped_column(String(32))
    # Hundredths of a percent (25.5 % is 2550), None when not given.
    ownership_hundredths: Mapped[int | None] = mapped_column(Integer, default=None)
    date_of_birth: Mapped[date] = mapped_column(Date)
    nationality: Mapped[str] = mapped_column(String(2))
    # When the platform's person.created event was recorded (once per person).
    announced_at: Mapped[datetime | None] = mapped_column(default=None)


class BusinessDocument(CompanyOwned, Timestamped, Base):
    """A document sent to the provider for an application or one of its people. The file
    itself is kept by the provider; only what identifies it is kept here."""

    __tablename__ = "business_documents"
    __table_args__ = (UniqueConstraint("company_id", "upload_key"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    application_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("business_applications.id", ondelete="CASCADE"), index=True
    )
    person_id: Mapped[int | None] = mapped_column(
        BigIntId, ForeignKey("business_associated_people.id", ondelete="CASCADE"), default=None
    )
    provider_document_id: Mapped[str] = mapped_column(String(40))
    document_type: Mapped[str] = mapped_column(String(64))
    content_type: Mapped[str] = mapped_column(String(64))
    size_bytes: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String(64))
    # Same application, person, type and bytes: the same upload (sent to the provider once).
    upload_key: Mapped[str] = mapped_column(String(64))
