"""Crypto custody: what the crypto rail holds for the company, per stablecoin, against the
ledger's position at the rail.

**The ledger's position at the rail** for a coin is the negated *posted* balance of the
company's settlement account in that coin (`settlement`, the ledger's mirror of coins outside
the platform). Every transfer sums to zero per currency, so it is exactly the posted sum of
every other account in the coin: the users' crypto balances (`crypto_wallet`, one per user
and coin) plus the company's own coins (its fee revenue in the coin, kept at the rail). A
deposit credited moves coins from settlement to a user; a sale, a withdrawal (and its network
fee) and a card load move them back when they are final.

**Posted, not available**: the rail's custody read counts a movement once it is final there
(`finplat.providers.crypto.custody`), and the ledger posts each crypto reservation when the
rail reports it final (a sale completed, a withdrawal confirmed, a card load final). A
movement in flight is in neither: a withdrawal waiting for its code, its cooling-off or the
chain, a sale pending, a card-provider funding pending. Pending transfers are refreshed from
the rail earlier in the same run (`crypto_transfers`), so a lost callback does not show here.

**What the rail holds that the ledger does not show at the rail**, counted into the
expectation (each named in the difference's note when it counted):
* deposits on chain that the ledger has not credited: waiting for finality (`PENDING`) or
  kept for return (`UNSUPPORTED`, in a stablecoin: another chain or address's coin);
* coins the deposit auto top-up converted 1:1 into the company's USD: the ledger moves them to
  settlement, but nothing is sold at the rail; they stay there as the company's.

    rail = -settlement(coin, posted) + deposits not credited + auto top-up conversions

A reported difference is `rail - expected`, with the expected amount as `ledger`. One line per
company and coin, without a user (the rail keeps the company's coins together).
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.crypto.networks import CURRENCIES
from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.kit.money import exponent, from_minor
from finplat.ledger import repository as ledger_repository
from finplat.ledger import service as ledger
from finplat.ledger.service import CompanyAccount
from finplat.providers.calls import commit_then_call
from finplat.providers.crypto.custody import CustodyBalances, coin_minor
from finplat.providers.errors import ProviderRejected, ProviderUnavailable
from finplat.providers.names import ExternalProvider
from finplat.providers.registry import Providers
from finplat.reconciliation import repository
from finplat.reconciliation.report import (
    NO_PROVIDER,
    BalanceCheck,
    BalanceDifference,
    UncheckedAccount,
)

SOURCE = ExternalProvider.CRYPTO.value
USD = "USD"


class CryptoCustody:
    """The crypto rail's custody balances, per stablecoin, against the ledger."""

    source = SOURCE

    async def companies(self, session: AsyncSession) -> list[int]:
        return await repository.companies_with_crypto(session)

    async def check(
        self,
        factory: async_sessionmaker[AsyncSession],
        providers: Providers,
        *,
        company_id: int,
    ) -> BalanceCheck:
        result = BalanceCheck()
        coins = list(CURRENCIES)
        async with unit_of_work(factory) as session:
            bind_company(session, company_id)
            if not await repository.has_crypto(session, company_id=company_id):
                return result  # a company in the run for other reasons: nothing at the rail

        def unchecked(reason: str) -> BalanceCheck:
            result.unchecked.append(
                UncheckedAccount(company_id, None, self.source, "custody", len(coins), reason)
            )
            return result

        rail = providers.crypto
        if rail is None or not isinstance(rail, CustodyBalances):
            return unchecked(NO_PROVIDER)
        try:
            held = await commit_then_call(
                None,
                providers.policy,
                provider=self.source,
                operation="custody_balances",
                call=lambda: rail.custody_balances(company_id=company_id),
                idempotent=True,
            )
        except (ProviderUnavailable, ProviderRejected) as exc:
            return unchecked(exc.code)
        # The ledger is read after the rail answered, each side once.
        async with unit_of_work(factory) as session:
            bind_company(session, company_id)
            position = await _ledger_position(session, company_id, coins)
            waiting = await repository.deposits_not_credited(
                session, company_id=company_id, currencies=coins
            )
            converted = await repository.auto_topup_conversions(session, company_id=company_id)
        for coin in coins:
            expected, notes = position.get(coin, 0), []
            not_credited = [d for d in waiting if d.currency == coin]
            if not_credited:
                expected += sum(_coins_of(d.amount_minor, d.amount) for d in not_credited)
                notes.append(f"{len(not_credited)} deposit(s) on chain not credited")
            if converted.get(coin):
                expected += converted[coin] * 10 ** (exponent(coin) - exponent(USD))
                notes.append("coins converted by auto top-ups, kept at the rail")
            at_rail = held.get(coin, 0)
            result.checked += 1
            if at_rail != expected:
                note = None
                if notes:
                    note = (
                        f"ledger position {from_minor(position.get(coin, 0), coin)}, with "
                        + "; ".join(notes)
                    )
                result.differences.append(
                    BalanceDifference(
                        company_id,
                        None,
                        None,
                        coin,
                        ledger_minor=expected,
                        provider_minor=at_rail,
                        source=self.source,
                        note=note,
                    )
                )
        return result


async def _ledger_position(
    session: AsyncSession, company_id: int, coins: list[str]
) -> dict[str, int]:
    """Per coin, minus the posted balance of the company's settlement account in it."""
    accounts = {}
    for coin in coins:
        found = await ledger.find_company_account(
            session, company_id=company_id, kind=CompanyAccount.SETTLEMENT, currency=coin
        )
        if found is not None:
            accounts[coin] = found.id
    totals = await ledger_repository.balance_totals_many(
        session, account_ids=list(accounts.values())
    )
    return {coin: -totals.get(account_id, (0, 0, 0))[0] for coin, account_id in accounts.items()}


def _coins_of(amount_minor: int | None, amount: str) -> int:
    """A deposit's coins as the rail keeps them: the credited amount, or for an unsupported
    one (not valued by the platform) its on-chain amount at six decimals, rounded down."""
    if amount_minor is not None:
        return amount_minor
    return coin_minor(amount) or 0
