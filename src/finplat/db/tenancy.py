"""The tenant guard: every ORM query in an authenticated request sees one company only.

Repositories already start from company-filtered statements; this guard is the second lock on
the same door. Once authentication has put the caller's company in `session.info`, every ORM
SELECT, UPDATE and DELETE touching a `CompanyOwned` entity gets `company_id = :company` added,
including joins, relationship loads and aliases, so a query written without the filter still
cannot read or change another company's rows.
"""

from __future__ import annotations

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import ORMExecuteState, Session, with_loader_criteria

from finplat.db.base import CompanyOwned

COMPANY_KEY = "finplat.company_id"


def bind_company(session: AsyncSession, company_id: int) -> None:
    session.info[COMPANY_KEY] = company_id


@event.listens_for(Session, "do_orm_execute")
def _scope_to_company(state: ORMExecuteState) -> None:
    company_id = state.session.info.get(COMPANY_KEY)
    if company_id is None:
        return
    if state.is_select or state.is_update or state.is_delete:
        state.statement = state.statement.options(
            with_loader_criteria(
                CompanyOwned,
                lambda cls: cls.company_id == company_id,
                include_aliases=True,
            )
        )
