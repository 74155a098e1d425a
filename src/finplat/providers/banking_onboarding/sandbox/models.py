"""The sandbox banking provider's own state (as an outside system would keep it)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, Integer, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId
from finplat.kit.clock import utcnow


class SandboxBankprovAccount(Base):
    """One onboarding application and the account it opened."""

    __tablename__ = "sandbox_bankprov_accounts"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    idempotency_key: Mapped[str] = mapped_column(String(128), unique=True)
    account_id: Mapped[str] = mapped_column(String(64), unique=True)
    correlation_id: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(32))
    documents_required: Mapped[bool] = mapped_column(Boolean, default=False)
    application: Mapped[str] = mapped_column(Text)  # the answers, as JSON
    proof_of_address_sha256: Mapped[str | None] = mapped_column(String(64), default=None)
    calls: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class SandboxBankprovDocument(Base):
    """A document the provider received: the PDF itself, so tests can read its pages."""

    __tablename__ = "sandbox_bankprov_documents"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    account_id: Mapped[str] = mapped_column(String(64), index=True)
    idempotency_key: Mapped[str] = mapped_column(String(128), unique=True)
    document_id: Mapped[str] = mapped_column(String(64), unique=True)
    content: Mapped[bytes] = mapped_column(LargeBinary)
    page_count: Mapped[int] = mapped_column(Integer)
    calls: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SandboxBankprovInformationRequest(Base):
    """A question the provider asked about an account (optionally about one person)."""

    __tablename__ = "sandbox_bankprov_information_requests"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    account_id: Mapped[str] = mapped_column(String(64), index=True)
    request_id: Mapped[str] = mapped_column(String(64), unique=True)
    question: Mapped[str] = mapped_column(String(500))
    person_id: Mapped[str | None] = mapped_column(String(64), default=None)
    answer: Mapped[str | None] = mapped_column(Text, default=None)
    answered_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
