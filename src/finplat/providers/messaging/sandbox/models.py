from __future__ import annotations

from sqlalchemy import String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, Timestamped
from finplat.sealing.column import SealedString

CODE_PURPOSE = "sandbox.mailbox.code"


class SandboxMailboxMessage(Timestamped, Base):
    """An email the sandbox mail provider "sent": what a developer reads in place of the
    user's inbox. The code is sealed at rest, as a mail provider's outbox would hold it."""

    __tablename__ = "sandbox_mailbox_messages"
    __table_args__ = (UniqueConstraint("company_id", "reference"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigIntId, index=False)
    reference: Mapped[str] = mapped_column(String(64))
    email: Mapped[str] = mapped_column(String(320))
    code: Mapped[str] = mapped_column(SealedString(255, purpose=CODE_PURPOSE))
