"""The MOR merchant's wallets: its master ledger account in each currency.

Company funding lands in the master account and card top-ups are paid from it, so the wallet
is that account, never a second store of the merchant's money. A wallet exists in a currency
once the master account does: the first funding opens it, and `open_wallet` opens it empty
(so a merchant can show a currency before any money arrives).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards.funding.service import CARD_LEDGER_CODE
from finplat.errors import NotFound
from finplat.ledger import service as ledger
from finplat.ledger.service import AccountTotals, Balance, CompanyAccount


class WalletNotFound(NotFound):
    code = "WALLET_NOT_FOUND"
    message = "The merchant has no wallet in that currency (fund it or open it first)."


@dataclass(frozen=True)
class CurrencyBalances:
    """One currency of the balances summary: the wallet, and the merchant's cards together."""

    currency: str
    wallet: Balance | None
    cards: AccountTotals | None


async def wallets(session: AsyncSession, *, company_id: int) -> list[Balance]:
    """Every wallet of the merchant, by currency code."""
    accounts = await ledger.company_accounts(
        session, company_id=company_id, kind=CompanyAccount.MASTER
    )
    found = await ledger.balances(session, company_id=company_id, accounts=accounts)
    return sorted(found, key=lambda b: b.currency)


async def wallet(session: AsyncSession, *, company_id: int, currency: str) -> Balance:
    """The wallet in `currency`; 404 `WALLET_NOT_FOUND` when the merchant has none in it."""
    account = await ledger.find_company_account(
        session, company_id=company_id, kind=CompanyAccount.MASTER, currency=currency
    )
    if account is None:
        raise WalletNotFound()
    return await ledger.balance_of(session, account)


async def open_wallet(session: AsyncSession, *, company_id: int, currency: str) -> Balance:
    """Open the wallet in `currency` (the master account, empty); opening one that exists
    answers it as it stands, so the call is safe to repeat."""
    account = await ledger.company_account(
        session, company_id=company_id, kind=CompanyAccount.MASTER, currency=currency
    )
    return await ledger.balance_of(session, account)


async def balances(session: AsyncSession, *, company_id: int) -> list[CurrencyBalances]:
    """Per currency: the wallet and the sum of the merchant's cards' ledger balances (each
    card's account mirrors what the card provider holds for it), both exact from the ledger."""
    by_wallet = {b.currency: b for b in await wallets(session, company_id=company_id)}
    by_cards = {
        t.currency: t
        for t in await ledger.totals_by_currency(
            session, company_id=company_id, code=CARD_LEDGER_CODE
        )
    }
    return [
        CurrencyBalances(currency, by_wallet.get(currency), by_cards.get(currency))
        for currency in sorted(by_wallet.keys() | by_cards.keys())
    ]
