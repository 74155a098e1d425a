"""Stablecoin deposits at the card provider (sandbox), and the DEPOSIT auto top-up they run.

A USDC or USDT deposit arrives at the user's deposit address at the card provider, which
settles it 1:1 into USD for the company, in whole cents (the sub-cent rest is not credited).
Phases (each a recovery point of the request's Idempotency-Key, so a retry never credits twice):
  started   -> lock the card (cancelled: 409; not a card-provider card: 409); reserve the
               pending transfer settlement(USD) -> master(USD); commit (`reserved`)
  reserved  -> post it and record `card.deposit.received`; commit (`deposited`): the deposit
               stands whatever happens to the top-up below
  deposited -> the card's DEPOSIT rule, when enabled for the deposit's currency, tops the card
               up by min(credited USD, rule `Amount`) within `MonthlyLimit` (nothing below the
               5.00 USD top-up minimum); a refused top-up leaves the money in the master
               account; a provider timeout is 503 with the deposit kept and the top-up
               reserved, and a retry with the same key resumes that top-up (never a second)
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards import lookup
from finplat.cards.funding import auto_topup
from finplat.errors import ApiError, Conflict
from finplat.events import service as events
from finplat.idempotency import service as idempotency
from finplat.idempotency.service import Claim
from finplat.kit.clock import utcnow
from finplat.kit.money import Money, exponent
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.service import CompanyAccount
from finplat.providers.registry import Providers

DEPOSIT_PROVIDER = "cardprov"  # the only card provider with deposit addresses
SETTLED_CURRENCY = "USD"
RESERVED = "reserved"
DEPOSITED = "deposited"
LEDGER_CODE = "card.deposit"
EVENT_TYPE = "card.deposit.received"
# A retry within the key's life always finds its reservation; an abandoned one is released.
RESERVATION_LIFETIME = idempotency.RETENTION

log = structlog.get_logger("finplat.cards.funding.deposits")


class DepositNotSupported(Conflict):
    code = "DEPOSIT_NOT_SUPPORTED"
    message = "Stablecoin deposits arrive at card-provider cards only."


@dataclass(frozen=True)
class Deposit:
    deposit_id: int  # the posted ledger transfer that credited the master account
    card_id: int
    money: Money  # as deposited, in the stablecoin
    credited: Money  # USD
    auto_topup_order_id: int | None


def settled_value(money: Money) -> Money:
    """The USD the card provider credits for a stablecoin amount: 1:1, rounded down to the
    cent (a provider never settles more than it received)."""
    shift = exponent(money.currency) - exponent(SETTLED_CURRENCY)
    return Money(money.minor // 10**shift, SETTLED_CURRENCY)


async def receive(
    session: AsyncSession,
    providers: Providers,
    *,
    claim: Claim,
    company_id: int,
    card_id: int,
    money: Money,
) -> Deposit:
    """Credit a stablecoin deposit to the company master account in USD (`card.deposit.received`),
    then run the card's DEPOSIT auto top-up for it. The caller has checked that the card is the
    user's; the deposit is committed before the top-up runs, so a failed top-up never undoes it
    (a refusal: the money stays in the master account; an outage: 503, resumed on retry)."""
    credited = settled_value(money)
    if credited.minor <= 0:
        raise ValueError("a deposit credits at least one cent")  # the schema's minimum
    if claim.recovery_point == idempotency.STARTED:
        card = await lookup.find_card(session, company_id=company_id, card_id=card_id, lock=True)
        card.refuse_if_cancelled()
        if card.provider != DEPOSIT_PROVIDER:
            raise DepositNotSupported()
        kinds = [CompanyAccount.SETTLEMENT, CompanyAccount.MASTER]
        found = await ledger.company_accounts_in(
            session, company_id=company_id, kinds=kinds, currency=SETTLED_CURRENCY
        )
        settlement, master = (found[kind] for kind in kinds)
        pending = await ledger.create_pending(
            session,
            company_id=company_id,
            legs=[Leg(settlement.id, -credited.minor), Leg(master.id, credited.minor)],
            code=LEDGER_CODE,
            expires_at=utcnow() + RESERVATION_LIFETIME,
            reference=claim.derived_key("card-deposit"),
            details={"cardId": card_id, "amount": str(money.amount), "currency": money.currency},
            accounts=(settlement, master),
        )
        await idempotency.checkpoint(session, claim, RESERVED, pending_id=pending.transfer_id)
    if claim.recovery_point == RESERVED:
        card = await lookup.find_card(session, company_id=company_id, card_id=card_id)
        posted = await ledger.post_pending(
            session, company_id=company_id, pending_id=int(claim.state["pending_id"])
        )
        await events.record(
            session,
            company_id=company_id,
            type_=EVENT_TYPE,
            domain="card",
            provider=card.provider,
            data={
                "cardId": card.id,
                "userId": card.user_id,
                "amount": money.amount,
                "currency": money.currency,
                "transferId": posted.transfer_id,
            },
        )
        await idempotency.checkpoint(session, claim, DEPOSITED, transfer_id=posted.transfer_id)
    else:
        # Resuming after the deposit: commit the key takeover before the top-up runs.
        await idempotency.checkpoint(session, claim, claim.recovery_point)
    deposit_id = int(claim.state["transfer_id"])
    order_id = await _auto_topup(
        session, providers, company_id, card_id, deposit_id, money, credited
    )
    return Deposit(deposit_id, card_id, money, credited, order_id)


async def _auto_topup(
    session: AsyncSession,
    providers: Providers,
    company_id: int,
    card_id: int,
    deposit_id: int,
    money: Money,
    credited: Money,
) -> int | None:
    try:
        return await auto_topup.run(
            session,
            providers,
            company_id=company_id,
            card_id=card_id,
            rule=auto_topup.DEPOSIT,
            trigger=str(deposit_id),
            amount_minor=credited.minor,
            deposit_currency=money.currency,
        )
    except ApiError as exc:
        if exc.status >= 500:
            # The top-up's outcome is unknown (its money stays reserved): not reported as
            # done. The deposit is committed; a retry with the same key finishes the top-up.
            raise
        # A refusal is final: the money stays in the master account.
        await session.rollback()
        log.warning("deposit_auto_topup_failed", card_id=card_id, code=exc.code)
        return None
