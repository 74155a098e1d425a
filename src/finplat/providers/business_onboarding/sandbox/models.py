"""The sandbox banking provider's own KYB state (an outside system's records, not the
platform's): applications, their people and their documents."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId
from finplat.kit.clock import utcnow


class SandboxBusinessApplication(Base):
    __tablename__ = "sandbox_bankprov_business_applications"
    __table_args__ = (UniqueConstraint("company_id", "idempotency_key"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    application_id: Mapped[str] = mapped_column(String(40), unique=True)
    idempotency_key: Mapped[str] = mapped_column(String(128))
    status: Mapped[str] = mapped_column(String(32))
    market: Mapped[str] = mapped_column(String(2))
    registered_name: Mapped[str] = mapped_column(String(200))
    registration_number: Mapped[str] = mapped_column(String(64))
    compliance: Mapped[str | None] = mapped_column(Text, default=None)
    account_id: Mapped[str | None] = mapped_column(String(40), default=None)
    last_submission_key: Mapped[str | None] = mapped_column(String(128), default=None)
    submissions: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class SandboxBusinessPerson(Base):
    __tablename__ = "sandbox_bankprov_business_people"
    __table_args__ = (UniqueConstraint("company_id", "idempotency_key"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    application_id: Mapped[str] = mapped_column(String(40), index=True)
    person_id: Mapped[str] = mapped_column(String(40), unique=True)
    idempotency_key: Mapped[str] = mapped_column(String(128))
    email: Mapped[str] = mapped_column(String(320))
    role: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SandboxBusinessDocument(Base):
    __tablename__ = "sandbox_bankprov_business_documents"
    __table_args__ = (UniqueConstraint("company_id", "idempotency_key"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    application_id: Mapped[str] = mapped_column(String(40), index=True)
    person_id: Mapped[str | None] = mapped_column(String(40), default=None)
    document_id: Mapped[str] = mapped_column(String(40), unique=True)
    idempotency_key: Mapped[str] = mapped_column(String(128))
    document_type: Mapped[str] = mapped_column(String(64))
    content_type: Mapped[str] = mapped_column(String(64))
    size_bytes: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
