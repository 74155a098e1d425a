"""Declarative base with a stable constraint naming convention, and shared mixins."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Integer, MetaData
from sqlalchemy.orm import DeclarativeBase, Mapped, declared_attr, mapped_column

from finplat.db.types import UtcDateTime
from finplat.kit.clock import utcnow

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# BIGINT on PostgreSQL; INTEGER on SQLite, where only an INTEGER PRIMARY KEY autoincrements.
BigIntId = BigInteger().with_variant(Integer(), "sqlite")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: UtcDateTime()}


class Timestamped:
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class CompanyOwned:
    """A row that belongs to one company.

    Tenant scoping is enforced for every class with this mixin: repositories start from a
    company-filtered statement, and the session guard in `finplat.db.tenancy` adds the same
    filter to any ORM query made inside an authenticated request.
    """

    @declared_attr
    def company_id(cls) -> Mapped[int]:
        return mapped_column(
            BigIntId, ForeignKey("companies.id", ondelete="CASCADE"), index=True, nullable=False
        )
