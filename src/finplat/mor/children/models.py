"""A parent's funding of one of its child companies."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId
from finplat.kit.clock import utcnow


class MorChildFunding(Base):
    """Money the parent moved from its master account to a child's: two ledger transfers, one
    in each company's ledger (the ledger is per company), written in one database transaction.

    Not `CompanyOwned`: the row belongs to two tenants. The parent reads it as its own
    (`parent_company_id`), the child as money received (`child_company_id`); every query names
    the company it reads for."""

    __tablename__ = "mor_child_fundings"
    __table_args__ = (
        Index("ix_mor_child_fundings_parent", "parent_company_id", "child_company_id", "id"),
        Index("ix_mor_child_fundings_child", "child_company_id", "id"),
    )

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    parent_company_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("companies.id", ondelete="CASCADE")
    )
    child_company_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("companies.id", ondelete="CASCADE")
    )
    currency: Mapped[str] = mapped_column(String(8))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    # Parent master -> parent settlement, and child settlement -> child master.
    parent_transfer_id: Mapped[int] = mapped_column(BigInteger)
    child_transfer_id: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
