"""Ledger test fixtures: a company with a few accounts in two currencies."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.companies import service as companies
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.models import LedgerAccount


@dataclass
class Book:
    company_id: int
    settlement: LedgerAccount  # may go negative: the outside world
    master: LedgerAccount  # sharded, non-negative
    card: LedgerAccount  # one shard, non-negative
    fees: LedgerAccount
    usdc_settlement: LedgerAccount
    usdc_card: LedgerAccount


async def open_book(session: AsyncSession, name: str = "Ledger Co") -> Book:
    created = await companies.create_company(session, name=name, sandbox=True)
    cid = created.company.id

    async def owned(code: str, currency: str) -> LedgerAccount:
        return await ledger.account(
            session, company_id=cid, code=code, owner_type="card", owner_id="1", currency=currency
        )

    return Book(
        company_id=cid,
        settlement=await ledger.company_account(
            session, company_id=cid, kind=ledger.CompanyAccount.SETTLEMENT, currency="USD"
        ),
        master=await ledger.company_account(
            session, company_id=cid, kind=ledger.CompanyAccount.MASTER, currency="USD"
        ),
        card=await owned("card", "USD"),
        fees=await ledger.company_account(
            session, company_id=cid, kind=ledger.CompanyAccount.FEE_REVENUE, currency="USD"
        ),
        usdc_settlement=await ledger.company_account(
            session, company_id=cid, kind=ledger.CompanyAccount.SETTLEMENT, currency="USDC"
        ),
        usdc_card=await owned("card", "USDC"),
    )


async def fund(session: AsyncSession, book: Book, account: LedgerAccount, amount: int) -> None:
    source = book.usdc_settlement if account.currency == "USDC" else book.settlement
    await ledger.post_transfer(
        session,
        company_id=book.company_id,
        legs=[Leg(source.id, -amount), Leg(account.id, amount)],
        code="test.funding",
    )


async def available(session: AsyncSession, book: Book, account: LedgerAccount) -> int:
    return (
        await ledger.balance(session, company_id=book.company_id, account_id=account.id)
    ).available
