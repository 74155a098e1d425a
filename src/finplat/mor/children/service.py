"""Parent company provisioning (issue 37, item 4).

Rules:
* A MOR company (the parent) creates child companies through the same path as the operator's
  `finplat company create`: each child is a tenant of its own, enabled for MOR, with its first
  API key and webhook secret shown once. The parent link is stored on the child.
* One level: a child provisions no children (409 `MOR_CHILD_CANNOT_PROVISION`), so a tree is
  never deeper than parent and children and "whose child" is one column.
* A parent reads only its own children; another company's child, its sibling or its parent
  answers as one that does not exist (404 `CHILD_COMPANY_NOT_FOUND`).
* Funding a child moves money from the parent's wallet to the child's in one database
  transaction, as two balanced ledger transfers, each within one company's ledger (the ledger
  is per company): parent master -> parent settlement, and child settlement -> child master.
  The settlements mirror each other (what left the parent is what reached the child), so
  across the two companies the money neither grows nor shrinks. A parent without the
  available funds is refused with 409 `INSUFFICIENT_FUNDS` and nothing is written.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.companies import service as companies
from finplat.companies.models import Company
from finplat.companies.service import CreatedCompany
from finplat.db.tenancy import COMPANY_KEY, bind_company
from finplat.errors import Conflict, NotFound
from finplat.events import service as events
from finplat.kit.money import Money
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.service import CompanyAccount
from finplat.mor.children import repository
from finplat.mor.children.models import MorChildFunding

PARENT_CODE = "mor.child_funding"  # the parent's transfer
CHILD_CODE = "mor.parent_funding"  # the child's transfer


class ChildCompanyNotFound(NotFound):
    code = "CHILD_COMPANY_NOT_FOUND"
    message = "No child company of yours with that id."


class ChildCannotProvision(Conflict):
    code = "MOR_CHILD_CANNOT_PROVISION"
    message = "A child company cannot provision child companies of its own."


async def create_child(
    session: AsyncSession,
    *,
    parent_id: int,
    name: str,
    sandbox: bool,
) -> CreatedCompany:
    """Create a child company of `parent_id`: MOR-enabled, its own tenant, with its first API
    key and webhook secret (the caller shows them once) and the default tiers. The child sets
    its webhook URL itself, with its own key (`PUT /api/v2/company/configuration`)."""
    parent = await companies.get_company(session, company_id=parent_id)
    if parent.parent_company_id is not None:
        raise ChildCannotProvision()
    created = await companies.create_company(
        session,
        name=name,
        is_mor=True,
        sandbox=sandbox,
    )
    created.company.parent_company_id = parent_id
    await session.flush()
    await events.record(
        session,
        company_id=parent_id,
        type_="mor.child.created",
        domain="mor",
        data={"childCompanyId": created.company.id, "name": created.company.name},
    )
    return created


async def child(session: AsyncSession, *, parent_id: int, child_id: int) -> Company:
    found = await repository.child_of(session, parent_id=parent_id, child_id=child_id)
    if found is None:
        raise ChildCompanyNotFound()
    return found


async def children(
    session: AsyncSession, *, parent_id: int, offset: int, limit: int
) -> list[Company]:
    return await repository.children_of(session, parent_id=parent_id, offset=offset, limit=limit)


async def fund_child(
    session: AsyncSession, *, parent_id: int, child_id: int, money: Money
) -> MorChildFunding:
    """Move `money` from the parent's wallet to its child's, atomically (see the module)."""
    await child(session, parent_id=parent_id, child_id=child_id)
    parent_accounts = await ledger.company_accounts_in(
        session,
        company_id=parent_id,
        kinds=[CompanyAccount.MASTER, CompanyAccount.SETTLEMENT],
        currency=money.currency,
    )
    details = {"parentCompanyId": parent_id, "childCompanyId": child_id}
    # First the debit that may be refused: a refusal leaves nothing written (the ledger puts
    # back what it changed before raising).
    sent = await ledger.post_transfer(
        session,
        company_id=parent_id,
        legs=[
            Leg(parent_accounts[CompanyAccount.MASTER].id, -money.minor),
            Leg(parent_accounts[CompanyAccount.SETTLEMENT].id, money.minor),
        ],
        code=PARENT_CODE,
        details=details,
    )
    with _acting_for(session, child_id):
        child_accounts = await ledger.company_accounts_in(
            session,
            company_id=child_id,
            kinds=[CompanyAccount.MASTER, CompanyAccount.SETTLEMENT],
            currency=money.currency,
        )
        received = await ledger.post_transfer(
            session,
            company_id=child_id,
            legs=[
                Leg(child_accounts[CompanyAccount.SETTLEMENT].id, -money.minor),
                Leg(child_accounts[CompanyAccount.MASTER].id, money.minor),
            ],
            code=CHILD_CODE,
            details=details,
        )
        funding = await repository.add_funding(
            session,
            MorChildFunding(
                parent_company_id=parent_id,
                child_company_id=child_id,
                currency=money.currency,
                amount_minor=money.minor,
                parent_transfer_id=sent.transfer_id,
                child_transfer_id=received.transfer_id,
            ),
        )
        data = {
            "fundingId": funding.id,
            "parentCompanyId": parent_id,
            "childCompanyId": child_id,
            "currency": money.currency,
            "amount": money.amount,
        }
        await events.record(
            session, company_id=child_id, type_="mor.funding.received", domain="mor", data=data
        )
    await events.record(
        session, company_id=parent_id, type_="mor.child.funded", domain="mor", data=data
    )
    return funding


async def fundings(
    session: AsyncSession, *, parent_id: int, child_id: int, offset: int, limit: int
) -> list[MorChildFunding]:
    await child(session, parent_id=parent_id, child_id=child_id)
    return await repository.fundings_of(
        session, parent_id=parent_id, child_id=child_id, offset=offset, limit=limit
    )


@contextmanager
def _acting_for(session: AsyncSession, company_id: int) -> Iterator[None]:
    """Bind the session's tenant guard to the child for its half of a funding, and back to
    the caller afterwards: the child's ledger rows are read and written as the child's."""
    caller = session.info.get(COMPANY_KEY)
    bind_company(session, company_id)
    try:
        yield
    finally:
        if caller is None:
            session.info.pop(COMPANY_KEY, None)
        else:
            bind_company(session, caller)
