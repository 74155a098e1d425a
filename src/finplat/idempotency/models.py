from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, LargeBinary, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned
from finplat.kit.clock import utcnow


class IdempotencyKey(CompanyOwned, Base):
    """One idempotent operation of one company.

    `scope` separates the `Idempotency-Key` header from business references that follow the
    same rules (`externalReferenceId`, `merchantReferenceId`). While an operation runs, the
    row carries a lease (`lock_token`, `locked_until`); `recovery_point` and `state` record
    how far a multi-step operation got, so a retry after a crash resumes instead of repeating
    a provider call. Once finished, the exact response bytes are kept for replay.

    Finishing a key changes no indexed column and its page keeps room (fillfactor), so the
    row is updated in place; the purge finds old rows by `created_at` (a key finishes after it
    was created). The company leads the unique key, so it needs no index of its own.
    """

    __tablename__ = "idempotency_keys"
    __table_args__ = (
        UniqueConstraint("company_id", "scope", "key"),
        {"postgresql_with": {"fillfactor": 60}},
    )

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("companies.id", ondelete="CASCADE"), nullable=False
    )
    scope: Mapped[str] = mapped_column(String(32))
    key: Mapped[str] = mapped_column(String(255))
    fingerprint: Mapped[str] = mapped_column(String(64))
    request_method: Mapped[str] = mapped_column(String(8))
    request_path: Mapped[str] = mapped_column(String(512))
    recovery_point: Mapped[str] = mapped_column(String(32))
    state: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    lock_token: Mapped[str | None] = mapped_column(String(32), default=None)
    locked_until: Mapped[datetime | None] = mapped_column(default=None)
    response_status: Mapped[int | None] = mapped_column(Integer, default=None)
    response_body: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)
    response_content_type: Mapped[str | None] = mapped_column(String(100), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    completed_at: Mapped[datetime | None] = mapped_column(default=None)
