"""The one place tenant scoping is written for reads and writes of company-owned rows."""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar, cast

from sqlalchemy import ColumnElement, Insert, Select, Table, bindparam, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.db.base import CompanyOwned
from finplat.db.dialect import for_update

ModelT = TypeVar("ModelT", bound=CompanyOwned)
RowT = TypeVar("RowT")


class CompanyRepository(Generic[ModelT]):
    """Repository for one company-owned model, bound to one company.

    Every statement starts from `scoped()`, which already filters by the company; `add` stamps
    the company on new rows. Subclasses add domain queries on top of `scoped()`.
    """

    model: ClassVar[type[Any]]

    def __init__(self, session: AsyncSession, company_id: int) -> None:
        self.session = session
        self.company_id = company_id

    def scoped(self) -> Select[ModelT]:
        return select(self.model).where(self.model.company_id == self.company_id)

    def bound(self, **values: Any) -> dict[str, Any]:
        """The parameters of a statement built with `of_company`: this company's, and `values`."""
        return {COMPANY_PARAM: self.company_id, **values}

    async def get(self, object_id: int, *, fresh: bool = False) -> ModelT | None:
        """The row by id; `fresh` overwrites a copy the session already holds with the
        database's (what `refresh` does, without a second read)."""
        params = self.bound(r_object_id=object_id)
        options = _FRESH if fresh else _AS_LOADED
        found = await self.session.execute(_by_id(self.model), params, execution_options=options)
        return cast("ModelT | None", found.scalar_one_or_none())

    async def insert(self, values: dict[str, Any]) -> None:
        """A row of this company written with an INSERT built once per model, not an object
        of the session: for rows the request does not read back (the ORM's flush of a new
        object costs nearly three times the statement, docs/performance.md)."""
        await self.session.execute(_insert(self.model), {**values, "company_id": self.company_id})

    async def add(self, obj: ModelT) -> ModelT:
        obj.company_id = self.company_id
        self.session.add(obj)
        await self.session.flush()
        return obj


# The parameter the company is bound to in statements built once (`of_company`, `bound`).
COMPANY_PARAM = "r_company_id"


def of_company(model: type[ModelT], *criteria: ColumnElement[bool]) -> Select[ModelT]:
    """`select(model)` of the company a repository binds at execution (`bound`), for a
    statement built once: on a hot path, building and keying a statement on every call cost
    a quarter to a half of the ORM's execution of one already built."""
    return select(model).where(model.company_id == bindparam(COMPANY_PARAM), *criteria)


def locked(stmt: Select[RowT]) -> Select[RowT]:
    """The rows locked (`db.dialect.for_update`) and re-read: a row the session already holds
    may be stale, and a decision under a lock must see what it protects."""
    return for_update(stmt).execution_options(populate_existing=True)


def lock_variants(stmt: Select[RowT]) -> dict[bool, Select[RowT]]:
    """The statement as it is (False) and `locked` (True), for a read that may lock."""
    return {False: stmt, True: locked(stmt)}


_BY_ID: dict[type[Any], Select[Any]] = {}
_INSERTS: dict[type[Any], Insert] = {}
_FRESH: dict[str, Any] = {"populate_existing": True}
_AS_LOADED: dict[str, Any] = {}


def _insert(model: type[Any]) -> Insert:
    """The INSERT into the model's table, built once per model; the columns come from the
    execution's values."""
    stmt = _INSERTS.get(model)
    if stmt is None:
        stmt = _INSERTS[model] = insert(cast(Table, model.__table__))
    return stmt


def _by_id(model: type[Any]) -> Select[Any]:
    """The read of one row by id, built once per model: on every request's path, building the
    expression cost more than the ORM's execution of a statement already built."""
    stmt = _BY_ID.get(model)
    if stmt is None:
        stmt = _BY_ID[model] = select(model).where(
            model.company_id == bindparam(COMPANY_PARAM), model.id == bindparam("r_object_id")
        )
    return stmt
