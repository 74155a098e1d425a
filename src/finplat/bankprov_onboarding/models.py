from __future__ import annotations

from datetime import date

from sqlalchemy import JSON, Boolean, Date, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class BankprovApplication(CompanyOwned, Timestamped, Base):
    """A personal user's onboarding application with the banking provider: the answers as
    sent, the provider's ids, and what the proof of address was (never its bytes)."""

    __tablename__ = "bankprov_applications"
    __table_args__ = (UniqueConstraint("company_id", "user_id"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("users.id", ondelete="CASCADE"))
    correlation_id: Mapped[str] = mapped_column(String(64))
    provider_account_id: Mapped[str] = mapped_column(String(64))
    requested_features: Mapped[list[str]] = mapped_column(JSON)
    main_purpose: Mapped[str] = mapped_column(String(200))
    source_of_funds: Mapped[str] = mapped_column(String(200))
    destination_of_funds: Mapped[str] = mapped_column(String(2))
    currencies_required: Mapped[str] = mapped_column(String(100))
    annual_volume: Mapped[str] = mapped_column(String(32))
    number_of_payments: Mapped[str] = mapped_column(String(32))
    card_purposes: Mapped[str | None] = mapped_column(String(200), default=None)
    atm_withdrawals_required: Mapped[bool | None] = mapped_column(Boolean, default=None)
    number_of_cards_required: Mapped[int | None] = mapped_column(Integer, default=None)
    card_annual_spend: Mapped[str | None] = mapped_column(String(32), default=None)
    proof_of_address_type: Mapped[str] = mapped_column(String(8))
    proof_of_address_size: Mapped[int] = mapped_column(Integer)
    proof_of_address_sha256: Mapped[str] = mapped_column(String(64))
    # As the caller stated it; null when not stated (the file's own date, or the provider's
    # review, decided its age).
    proof_of_address_date: Mapped[date | None] = mapped_column(Date, default=None)


class BankprovDocument(CompanyOwned, Timestamped, Base):
    """One verification upload sent to the banking provider as a single merged PDF.

    `fingerprint` (SHA-256 over the SHA-256 of each input file, in order) makes an upload
    idempotent: the same files again return this document.
    """

    __tablename__ = "bankprov_documents"
    __table_args__ = (UniqueConstraint("company_id", "application_id", "fingerprint"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    application_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("bankprov_applications.id", ondelete="CASCADE"), index=True
    )
    provider_document_id: Mapped[str] = mapped_column(String(64))
    fingerprint: Mapped[str] = mapped_column(String(64))
    file_count: Mapped[int] = mapped_column(Integer)
    page_count: Mapped[int] = mapped_column(Integer)
    size_bytes: Mapped[int] = mapped_column(Integer)
