"""The user's crypto balances: one ledger account per user and stablecoin, credited by final
deposits and debited by the flows that take crypto out (never below zero)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.crypto.networks import CURRENCIES
from finplat.ledger import service as ledger
from finplat.ledger.models import LedgerAccount
from finplat.ledger.service import Balance

LEDGER_CODE = "crypto_wallet"
OWNER_TYPE = "user"


async def wallet_account(
    session: AsyncSession, *, company_id: int, user_id: int, currency: str
) -> LedgerAccount:
    return await ledger.account(
        session,
        company_id=company_id,
        code=LEDGER_CODE,
        owner_type=OWNER_TYPE,
        owner_id=str(user_id),
        currency=currency,
    )


async def balances_of(session: AsyncSession, *, company_id: int, user_id: int) -> list[Balance]:
    """One balance per stablecoin, zero where nothing arrived yet."""
    accounts = [
        await wallet_account(session, company_id=company_id, user_id=user_id, currency=c)
        for c in CURRENCIES
    ]
    return await ledger.balances(session, company_id=company_id, accounts=accounts)
