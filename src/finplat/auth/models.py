from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class ApiKey(CompanyOwned, Timestamped, Base):
    """A company API key. Only its SHA-256 hash is stored; the key itself is shown once."""

    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    # The first characters of the key, enough for an operator to tell keys apart.
    display_prefix: Mapped[str] = mapped_column(String(24))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)


class OperatorKey(Timestamped, Base):
    """A platform operator's key: administers `/api/v2/admin/*` for every company. Only its
    SHA-256 hash is stored; the key itself is shown once, by `finplat operator create-key`."""

    __tablename__ = "operator_keys"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    display_prefix: Mapped[str] = mapped_column(String(24))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)
