from __future__ import annotations

from sqlalchemy import Boolean, String
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, Timestamped


class Company(Timestamped, Base):
    __tablename__ = "companies"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(200))
    is_mor: Mapped[bool] = mapped_column(Boolean, default=False)
    webhook_url: Mapped[str | None] = mapped_column(String(2048), default=None)
    # Kept retrievable (not hashed): outbound webhooks are signed with it.
    webhook_secret: Mapped[str] = mapped_column(String(128))
