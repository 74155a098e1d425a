"""The one place tenant scoping is written for reads and writes of company-owned rows."""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar, cast

from sqlalchemy import (
    Column,
    ColumnElement,
    Insert,
    Select,
    Table,
    Update,
    bindparam,
    insert,
    inspect,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.exc import StaleDataError

from finplat.db import driver_statements
from finplat.db.base import CompanyOwned
from finplat.db.dialect import create_unless_taken, for_update, inserts_ignoring_conflicts

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
        connection = await driver_statements.connection_of(self.session)
        values = {**values, "company_id": self.company_id}
        await driver_statements.execute(connection, _insert(self.model), values)

    async def create(self, values: dict[str, Any]) -> ModelT:
        """A new row of this company, inserted by a statement built once per model and loaded
        from what it returns: an object of the session the request goes on using, without the
        ORM's flush of a new object (about three times its statement)."""
        found = await self.session.scalars(
            _created(self.model), {**values, "company_id": self.company_id}
        )
        return cast(ModelT, found.one())

    async def create_unless_taken(self, values: dict[str, Any]) -> ModelT | None:
        """`create`, or None when a unique key of the table already holds such a row: one
        statement, the key deciding (a read first would cost a second and still race)."""
        values = {**values, "company_id": self.company_id}
        return cast("ModelT | None", await create_unless_taken(self.session, self.model, values))

    async def insert_unless_taken(self, values: dict[str, Any]) -> int | None:
        """`create_unless_taken` answering the new row's id only (None when a unique key of
        the table already holds such a row), for a caller that holds what it wrote: no object
        of the session is loaded. Built once per model and database."""
        connection = await driver_statements.connection_of(self.session)
        statement = _inserted_ids(self.model)[connection.dialect.name]
        values = {**values, "company_id": self.company_id}
        inserted = await driver_statements.returning(connection, statement, values)
        return int(inserted[0][0]) if inserted else None

    async def save(self, obj: ModelT) -> None:
        """Write the changes of a row of this company the session has loaded: one UPDATE of
        the changed columns by id, built once per set of columns, and the object marked as
        written (the ORM's flush of one object costs about twice its statement: its unit of
        work, docs/performance.md). Anything the statement cannot say — an object not yet
        written, a change beyond its own columns — goes through the ORM's flush."""
        state = inspect(obj)
        if not state.committed_state:
            return
        attributes = state.mapper.column_attrs
        if not state.persistent or any(key not in attributes for key in state.committed_state):
            await self.session.flush()
            return
        values = {attributes[key].columns[0].key: state.dict[key] for key in state.committed_state}
        table = cast(Table, state.mapper.local_table)
        for column in _defaults_on_update(table):
            if column.key not in values:
                value = values[column.key] = column.onupdate.arg(None)  # type: ignore[union-attr]
                state.dict[state.mapper.get_property_by_column(column).key] = value
        params = {f"v_{key}": value for key, value in values.items()}
        params[COMPANY_PARAM], params["r_object_id"] = self.company_id, state.identity[0]
        connection = await driver_statements.connection_of(self.session)
        written = await driver_statements.execute(
            connection, _update(table, frozenset(values)), params
        )
        if written != 1:
            raise StaleDataError(f"{table.name} {state.identity[0]} is not the company's row")
        # Everything changed is now written: the object is as clean as a flush leaves it.
        state._commit_all(state.dict, self.session.sync_session.identity_map)

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
_UPDATES: dict[tuple[Table, frozenset[str]], Update] = {}
_CREATES: dict[type[Any], Any] = {}
_INSERTED_IDS: dict[type[Any], dict[str, Insert]] = {}
_UPDATED_BY_DEFAULT: dict[Table, list[Column[Any]]] = {}
_FRESH: dict[str, Any] = {"populate_existing": True}
_AS_LOADED: dict[str, Any] = {}


def _insert(model: type[Any]) -> Insert:
    """The INSERT into the model's table, built once per model; the columns come from the
    execution's values."""
    stmt = _INSERTS.get(model)
    if stmt is None:
        stmt = _INSERTS[model] = insert(cast(Table, model.__table__))
    return stmt


def _inserted_ids(model: type[Any]) -> dict[str, Insert]:
    """`INSERT ... ON CONFLICT DO NOTHING RETURNING id` into the model's table, per database,
    built once per model."""
    statements = _INSERTED_IDS.get(model)
    if statements is None:
        table = cast(Table, model.__table__)
        statements = _INSERTED_IDS[model] = {
            name: stmt.returning(table.c.id)
            for name, stmt in inserts_ignoring_conflicts(table).items()
        }
    return statements


def _created(model: type[Any]) -> Any:
    """`_insert` returning the new row as the model's object, built once per model."""
    stmt = _CREATES.get(model)
    if stmt is None:
        table = cast(Table, model.__table__)
        stmt = _CREATES[model] = select(model).from_statement(insert(table).returning(*table.c))
    return stmt


def _update(table: Table, keys: frozenset[str]) -> Update:
    """The UPDATE of a company's row by id setting `keys`, built once per set of columns."""
    stmt = _UPDATES.get((table, keys))
    if stmt is None:
        stmt = _UPDATES[(table, keys)] = (
            update(table)
            .where(
                table.c.company_id == bindparam(COMPANY_PARAM),
                table.c.id == bindparam("r_object_id"),
            )
            .values({table.c[key]: bindparam(f"v_{key}") for key in sorted(keys)})
        )
    return stmt


def _defaults_on_update(table: Table) -> list[Column[Any]]:
    """The table's columns with a Python `onupdate` (`updated_at`), which an UPDATE of other
    columns sets as the ORM's flush would."""
    found = _UPDATED_BY_DEFAULT.get(table)
    if found is None:
        found = [c for c in table.c if c.onupdate is not None]
        if any(not callable(getattr(c.onupdate, "arg", None)) for c in found):
            raise TypeError(f"{table.name}: only Python onupdate defaults are supported")
        _UPDATED_BY_DEFAULT[table] = found
    return found


def _by_id(model: type[Any]) -> Select[Any]:
    """The read of one row by id, built once per model: on every request's path, building the
    expression cost more than the ORM's execution of a statement already built."""
    stmt = _BY_ID.get(model)
    if stmt is None:
        stmt = _BY_ID[model] = select(model).where(
            model.company_id == bindparam(COMPANY_PARAM), model.id == bindparam("r_object_id")
        )
    return stmt
