"""The tenant guard: every ORM query in an authenticated request sees one company only.

Repositories already start from company-filtered statements; this guard is the second lock on
the same door. Once authentication has put the caller's company in `session.info`, every ORM
SELECT, UPDATE and DELETE touching a `CompanyOwned` entity gets `company_id = :company` added,
including joins, relationship loads and aliases, so a query written without the filter still
cannot read or change another company's rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from weakref import WeakKeyDictionary

from sqlalchemy import Executable, bindparam, event
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import ORMExecuteState, Session, with_loader_criteria

from finplat.db.base import CompanyOwned

COMPANY_KEY = "finplat.company_id"
_COMPANY_PARAM = "finplat_guard_company_id"

# One option for every company: the company travels as a parameter of the execution. A lambda
# closing over the company instead was built and analysed for its closure on every statement:
# a sixth of the CPU of an ORM read by id. The parameter's name is spelled out in the lambda:
# its analysis would take a module-level name for a value to track.
_GUARD = with_loader_criteria(
    CompanyOwned,
    lambda cls: cls.company_id == bindparam("finplat_guard_company_id"),
    include_aliases=True,
)


# The guarded copy of each statement, for as long as the statement lives. SQLAlchemy keys a
# statement for its compiled cache once per statement object; a copy made at every execution
# was keyed at every execution, which undid the keying once of the statements built once.
_GUARDED: WeakKeyDictionary[Executable, Executable] = WeakKeyDictionary()


def _guarded(statement: Executable) -> Executable:
    guarded = _GUARDED.get(statement)
    if guarded is None:
        guarded = _GUARDED[statement] = statement.options(_GUARD)
    return guarded


def bind_company(session: AsyncSession, company_id: int) -> None:
    session.info[COMPANY_KEY] = company_id


class UnscopedWrite(RuntimeError):
    """An UPDATE or DELETE the guard cannot scope, refused before it runs."""


@event.listens_for(Session, "do_orm_execute")
def _scope_to_company(state: ORMExecuteState) -> None:
    company_id = state.session.info.get(COMPANY_KEY)
    if company_id is None:
        return
    if state.is_select or state.is_update or state.is_delete:
        parameters = state.parameters
        if not isinstance(parameters, Mapping | None):
            # SQLAlchemy's bulk UPDATE by primary key (a list of rows) takes no loader
            # criteria: it would change another company's row by its id.
            raise UnscopedWrite("a bulk write by primary key cannot be scoped to the company")
        state.statement = _guarded(state.statement)
        state.parameters = {**(parameters or {}), _COMPANY_PARAM: company_id}
