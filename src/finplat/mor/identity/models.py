from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class MorCredential(CompanyOwned, Timestamped, Base):
    """A simple user's sign-in: the email it signs in with (unique in the company, compared
    lower-cased) and its password as an argon2id hash (never the password itself)."""

    __tablename__ = "mor_credentials"
    __table_args__ = (UniqueConstraint("company_id", "email_key"), UniqueConstraint("user_id"))

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("users.id", ondelete="CASCADE"))
    email_key: Mapped[str] = mapped_column(String(320))
    password_hash: Mapped[str] = mapped_column(String(255))


class MorAccessToken(CompanyOwned, Base):
    """A bearer token issued to a simple user: only its SHA-256 is kept, so a leaked table
    signs nobody in; revoked or expired, it is refused."""

    __tablename__ = "mor_access_tokens"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column()
    expires_at: Mapped[datetime] = mapped_column()
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)
