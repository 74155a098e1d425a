from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned
from finplat.kit.clock import utcnow


class LedgerAccount(CompanyOwned, Base):
    """A balance holder: a company account (master, fee revenue, provider settlement) or an
    owned object's account (card, budget, ...). `shard_count` > 1 spreads a hot account's
    balance over several rows so concurrent postings do not queue on one row lock."""

    __tablename__ = "ledger_accounts"
    __table_args__ = (
        UniqueConstraint("company_id", "code", "owner_type", "owner_id", "currency"),
        CheckConstraint("shard_count >= 1", name="shard_count_positive"),
    )

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    code: Mapped[str] = mapped_column(String(32))
    owner_type: Mapped[str] = mapped_column(String(32))
    owner_id: Mapped[str] = mapped_column(String(64))
    currency: Mapped[str] = mapped_column(String(8))
    allow_negative: Mapped[bool] = mapped_column(Boolean)
    shard_count: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class LedgerBalance(Base):
    """One shard of an account's balance; the account's balance is the sum of its shards.

    `floor` is NULL for accounts that may go negative and 0 otherwise; the CHECK makes the
    database itself refuse a shard whose available balance would go below it.
    """

    __tablename__ = "ledger_balances"
    __table_args__ = (
        CheckConstraint(
            "floor IS NULL OR posted - pending_debits >= floor", name="available_above_floor"
        ),
        CheckConstraint("pending_debits >= 0 AND pending_credits >= 0", name="pending_positive"),
    )

    account_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("ledger_accounts.id", ondelete="CASCADE"), primary_key=True
    )
    shard: Mapped[int] = mapped_column(Integer, primary_key=True)
    posted: Mapped[int] = mapped_column(BigInteger, default=0)
    pending_debits: Mapped[int] = mapped_column(BigInteger, default=0)
    pending_credits: Mapped[int] = mapped_column(BigInteger, default=0)
    floor: Mapped[int | None] = mapped_column(BigInteger, default=None)


class LedgerTransfer(CompanyOwned, Base):
    """A transfer and its entries are the journal: append-only, written by this package alone.

    Journal rows carry no foreign keys (nor a company index): checking them cost a row lock on
    the parent per inserted row, most of a card top-up's database time, and nothing but the
    ledger's own code, which resolves every account first, ever writes these tables.
    `finplat ledger verify` checks every reference instead. Pages keep room (fillfactor) so
    that resolving a pending transfer updates its row in place.
    """

    __tablename__ = "ledger_transfers"
    __table_args__ = (
        # A company's fundings, for the MOR merchant's wallet statement. Partial: a top-up's
        # transfer (any other code) pays no index insertion for it.
        Index(
            "ix_ledger_transfers_company_funding",
            "company_id",
            "id",
            postgresql_where=text("code = 'company.funding'"),
            sqlite_where=text("code = 'company.funding'"),
        ),
        {"postgresql_with": {"fillfactor": 80}},
    )

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigIntId, nullable=False)
    kind: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    # For POST and VOID transfers: the pending transfer they resolve. Unique, so a pending
    # transfer can be resolved once and only once.
    pending_id: Mapped[int | None] = mapped_column(BigIntId, unique=True, default=None)
    code: Mapped[str] = mapped_column(String(64))
    reference: Mapped[str | None] = mapped_column(String(255), default=None)
    details: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    expires_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class LedgerEntry(Base):
    """An immutable line of a transfer. Never updated, never deleted. Without foreign keys,
    like its transfer (see `LedgerTransfer`), and found by transfer only: nothing reads an
    account's entries (balances are kept per shard), so they carry no account index, which
    cost every posting an index insertion per line. An account statement would add one on
    (account_id, id)."""

    __tablename__ = "ledger_entries"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    transfer_id: Mapped[int] = mapped_column(BigIntId, index=True)
    account_id: Mapped[int] = mapped_column(BigIntId)
    shard: Mapped[int] = mapped_column(Integer)
    layer: Mapped[str] = mapped_column(String(16))
    amount: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(8))
