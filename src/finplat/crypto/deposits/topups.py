"""Crypto deposits feed the card's `DEPOSIT` auto top-up rule.

When a deposit is credited and the user has a card-provider card whose `DEPOSIT` rule is on
for the deposit's stablecoin, the deposit is marked `DUE` (in the credit's transaction). A
step run by the background job (and by the sandbox right after a chain simulation) then, per
deposit:
  DUE       -> convert: the user's crypto balance pays the company's USD master account 1:1
               for min(deposit in whole cents, rule `Amount`) (the sub-cent rest stays in the
               crypto balance); below the 5.00 USD top-up minimum nothing is converted
               (`SKIPPED`). Committed as `CONVERTED`.
  CONVERTED -> the ordinary auto top-up (`cards.funding.auto_topup.run`, same fees, limits and
               ledger path), keyed by the deposit: run again it resumes, never tops up twice.
               Done -> `TOPPED_UP`. Refused, or not run (rule switched off, `MonthlyLimit`)
               -> the conversion is undone, the money back in the crypto balance
               (`FAILED` / `SKIPPED`). Provider outcome unknown (5xx) -> stays `CONVERTED` and
               the next step resumes the same top-up.
"""

from __future__ import annotations

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.cards.funding import auto_topup
from finplat.cards.funding.deposits import DEPOSIT_PROVIDER, SETTLED_CURRENCY
from finplat.cards.funding.repository import AutoTopupRepository
from finplat.cards.funding.service import MIN_TOPUP
from finplat.cards.status import CardStatus
from finplat.crypto import balances
from finplat.crypto.deposits.models import CryptoDeposit
from finplat.crypto.deposits.repository import DepositRepository, topups_due
from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.errors import ApiError
from finplat.kit.money import exponent, to_minor
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.service import CompanyAccount, InsufficientFunds
from finplat.providers.registry import Providers

log = structlog.get_logger("finplat.crypto.deposits.topups")
DUE = "DUE"
CONVERTED = "CONVERTED"
TOPPED_UP = "TOPPED_UP"
SKIPPED = "SKIPPED"
FAILED = "FAILED"
LEDGER_CODE = "crypto.deposit.auto_topup"
BATCH = 20


async def mark_due(session: AsyncSession, deposit: CryptoDeposit) -> None:
    """Called as the deposit is credited: mark it for the card rule, if the user has one."""
    assert deposit.user_id is not None
    card_id = await DepositRepository(session, deposit.company_id).deposit_rule_card(
        user_id=deposit.user_id,
        currency=deposit.currency,
        provider=DEPOSIT_PROVIDER,
        rule=auto_topup.DEPOSIT,
        cancelled=CardStatus.CANCELLED.value,
    )
    if card_id is not None:
        deposit.auto_topup_card_id = card_id
        deposit.auto_topup_status = DUE


async def run_due(
    factory: async_sessionmaker[AsyncSession], providers: Providers, *, company_id: int | None
) -> int:
    """One round over the deposits whose top-up is not settled; how many were settled."""
    async with unit_of_work(factory) as session:
        due = await topups_due(
            session, statuses=(DUE, CONVERTED), company_id=company_id, limit=BATCH
        )
    settled = 0
    for owner, deposit_id in due:
        try:
            settled += await _run_one(factory, providers, owner, deposit_id)
        except ApiError as exc:
            log.warning("crypto_deposit_topup_deferred", deposit_id=deposit_id, code=exc.code)
    return settled


async def _run_one(
    factory: async_sessionmaker[AsyncSession],
    providers: Providers,
    company_id: int,
    deposit_id: str,
) -> bool:
    async with unit_of_work(factory) as session:
        bind_company(session, company_id)
        deposit = await DepositRepository(session, company_id).locked(deposit_id)
        if deposit is None or deposit.auto_topup_status not in (DUE, CONVERTED):
            return False
        if deposit.auto_topup_status == DUE and not await _convert(session, deposit):
            return True
        card_id, amount = deposit.auto_topup_card_id, deposit.auto_topup_amount_minor
        currency = deposit.currency
    assert card_id is not None
    assert amount is not None
    try:
        async with unit_of_work(factory) as session:
            bind_company(session, company_id)
            order_id = await auto_topup.run(
                session,
                providers,
                company_id=company_id,
                card_id=card_id,
                rule=auto_topup.DEPOSIT,
                trigger=f"crypto-deposit:{deposit_id}",
                amount_minor=amount,
                deposit_currency=currency,
            )
    except ApiError as exc:
        if exc.status >= 500:
            raise  # the top-up's outcome is unknown: resumed by the next round
        order_id, outcome = None, FAILED
        log.warning("crypto_deposit_topup_refused", deposit_id=deposit_id, code=exc.code)
    else:
        outcome = TOPPED_UP if order_id is not None else SKIPPED
    async with unit_of_work(factory) as session:
        bind_company(session, company_id)
        deposit = await DepositRepository(session, company_id).locked(deposit_id)
        assert deposit is not None
        if deposit.auto_topup_status != CONVERTED:
            return False
        if outcome != TOPPED_UP:
            await _unconvert(session, deposit)
        deposit.auto_topup_status = outcome
        deposit.auto_topup_order_id = order_id
    return True


async def _convert(session: AsyncSession, deposit: CryptoDeposit) -> bool:
    """Pay the master account in USD from the crypto balance; False when nothing is to run."""
    assert deposit.amount_minor is not None
    assert deposit.auto_topup_card_id is not None
    rule = next(
        (
            r
            for r in await AutoTopupRepository(session, deposit.company_id).of_card(
                deposit.auto_topup_card_id
            )
            if r.rule == auto_topup.DEPOSIT
        ),
        None,
    )
    shift = 10 ** (exponent(deposit.currency) - exponent(SETTLED_CURRENCY))
    usd = deposit.amount_minor // shift
    if rule is not None:
        usd = min(usd, rule.amount_minor)
    if rule is None or not rule.enabled or usd < to_minor(MIN_TOPUP, SETTLED_CURRENCY):
        deposit.auto_topup_status = SKIPPED
        return False
    try:
        await _move(session, deposit, usd, back=False)
    except InsufficientFunds:  # the balance was spent before the rule ran
        deposit.auto_topup_status = SKIPPED
        return False
    deposit.auto_topup_amount_minor = usd
    deposit.auto_topup_status = CONVERTED
    await session.flush()
    return True


async def _unconvert(session: AsyncSession, deposit: CryptoDeposit) -> None:
    assert deposit.auto_topup_amount_minor is not None
    await _move(session, deposit, deposit.auto_topup_amount_minor, back=True)


async def _move(session: AsyncSession, deposit: CryptoDeposit, usd: int, *, back: bool) -> None:
    """crypto balance -> settlement (stablecoin) and settlement -> master (USD), or back."""
    assert deposit.user_id is not None
    company_id = deposit.company_id
    coin = usd * 10 ** (exponent(deposit.currency) - exponent(SETTLED_CURRENCY))
    settlement = ledger.company_key(company_id, CompanyAccount.SETTLEMENT)
    accounts = await ledger.accounts_in(
        session,
        company_id=company_id,
        wanted=[
            (balances.wallet_key(deposit.user_id), deposit.currency),
            (settlement, deposit.currency),
            (settlement, SETTLED_CURRENCY),
            (ledger.company_key(company_id, CompanyAccount.MASTER), SETTLED_CURRENCY),
        ],
    )
    wallet, coin_settlement, usd_settlement, master = accounts
    sign = -1 if back else 1
    await ledger.post_transfer(
        session,
        company_id=company_id,
        legs=[
            Leg(wallet.id, -sign * coin),
            Leg(coin_settlement.id, sign * coin),
            Leg(usd_settlement.id, -sign * usd),
            Leg(master.id, sign * usd),
        ],
        code=LEDGER_CODE,
        reference=deposit.id,
        details={"direction": "back" if back else "out"},
        accounts=accounts,
    )
