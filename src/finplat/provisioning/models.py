from __future__ import annotations

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class ProviderAccount(CompanyOwned, Timestamped, Base):
    """A user's standing with one provider: its own approval state and, once provisioned, the
    provider's account id. One row per user and provider."""

    __tablename__ = "provider_accounts"
    __table_args__ = (UniqueConstraint("company_id", "user_id", "provider"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    provider: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(32))
    provider_account_id: Mapped[str | None] = mapped_column(String(64), default=None)
    status_reason: Mapped[str | None] = mapped_column(String(200), default=None)
