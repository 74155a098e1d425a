"""The user's crypto balances: one ledger account per user and stablecoin, credited by final
deposits and debited by the flows that take crypto out (never below zero)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.crypto.networks import CURRENCIES
from finplat.ledger import service as ledger
from finplat.ledger.models import LedgerAccount
from finplat.ledger.service import Balance, CompanyAccount

LEDGER_CODE = "crypto_wallet"
OWNER_TYPE = "user"


def wallet_key(user_id: int) -> ledger.AccountKey:
    """The key of the user's crypto balance, one account per stablecoin."""
    return ledger.AccountKey(LEDGER_CODE, OWNER_TYPE, str(user_id))


async def with_settlement(
    session: AsyncSession,
    *,
    company_id: int,
    user_id: int,
    currency: str,
    also: Sequence[ledger.CompanyAccount] = (),
) -> list[LedgerAccount]:
    """The user's crypto balance in `currency` and the company's settlement account in it,
    where coins from or to the chain pass, then the company's accounts of `also` in it: read
    together."""
    keys = [wallet_key(user_id), ledger.company_key(company_id, CompanyAccount.SETTLEMENT)]
    keys += [ledger.company_key(company_id, kind) for kind in also]
    return await ledger.accounts_of(session, company_id=company_id, currency=currency, keys=keys)


async def wallet_account(
    session: AsyncSession, *, company_id: int, user_id: int, currency: str
) -> LedgerAccount:
    [account] = await ledger.accounts_of(
        session, company_id=company_id, currency=currency, keys=[wallet_key(user_id)]
    )
    return account


async def balances_of(session: AsyncSession, *, company_id: int, user_id: int) -> list[Balance]:
    """One balance per stablecoin, zero where nothing arrived yet (its accounts read in one
    statement)."""
    key = wallet_key(user_id)
    accounts = await ledger.accounts_in(
        session, company_id=company_id, wanted=[(key, c) for c in CURRENCIES]
    )
    return await ledger.balances(session, company_id=company_id, accounts=accounts)
