"""Auto top-up rules of a card and running them.

Rules: `LOW_BALANCE` (after a clearing leaves the card's available balance, with the top-ups
already on their way to it, below `Threshold`),
`FAILED_TX` (after a decline for insufficient funds) and `DEPOSIT` (after a USDC or USDT deposit
in the rule's `Currency` at the card provider, settled 1:1 into the company's USD master account;
card-provider cards only: see `finplat.cards.funding.deposits`). A triggered rule tops the card up
by its `Amount` (a deposit: by the deposited USD value when that is less, and not at all below
the 5.00 top-up minimum) through the ordinary top-up (same fees, same ledger path) under a key
derived from the triggering transaction, so one trigger tops up at most once (running it again
resumes or answers that top-up), and only while the month's automatic top-ups stay within
`MonthlyLimit`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards import lookup
from finplat.cards.funding import service as funding
from finplat.cards.funding.models import CardAutoTopup, CardFunding
from finplat.cards.funding.repository import AutoTopupRepository, FundingRepository
from finplat.cards.funding.service import FundingKind, FundingStatus
from finplat.cards.models import Card
from finplat.cards.status import CardStatus
from finplat.errors import Conflict
from finplat.idempotency.service import Claim
from finplat.kit.clock import utcnow
from finplat.kit.money import Money, to_minor
from finplat.ledger import service as ledger
from finplat.providers.registry import Providers

LOW_BALANCE = "LOW_BALANCE"
FAILED_TX = "FAILED_TX"
DEPOSIT = "DEPOSIT"
RULES = (LOW_BALANCE, FAILED_TX, DEPOSIT)


class AutoTopupNotSupported(Conflict):
    code = "AUTO_TOPUP_NOT_SUPPORTED"
    message = "Deposit auto top-up is offered on card-provider cards only."


@dataclass(frozen=True)
class Usage:
    count: int
    amount_minor: int


def month_start(now: datetime | None = None) -> datetime:
    now = now or utcnow()
    return now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


async def rules_of(
    session: AsyncSession, company_id: int, card_id: int
) -> dict[str, CardAutoTopup]:
    rows = await AutoTopupRepository(session, company_id).of_card(card_id)
    return {r.rule: r for r in rows}


async def usage(session: AsyncSession, card: Card) -> Usage:
    count, total = await FundingRepository(session, card.company_id).count_and_total_since(
        card.id,
        kind=FundingKind.AUTO_TOPUP.value,
        not_status=FundingStatus.FAILED.value,
        since=month_start(),
    )
    return Usage(count, total)


async def configure(
    session: AsyncSession,
    *,
    card: Card,
    rule: str,
    enabled: bool,
    amount_minor: int,
    monthly_limit_minor: int,
    threshold_minor: int | None = None,
    deposit_currency: str | None = None,
) -> CardAutoTopup:
    card.refuse_if_cancelled()
    if rule == DEPOSIT and card.provider != "cardprov":
        raise AutoTopupNotSupported()
    row = (await rules_of(session, card.company_id, card.id)).get(rule)
    if row is None:
        row = CardAutoTopup(company_id=card.company_id, card_id=card.id, rule=rule)
        session.add(row)
    row.enabled = enabled
    row.amount_minor = amount_minor
    row.monthly_limit_minor = monthly_limit_minor
    row.threshold_minor = threshold_minor
    row.deposit_currency = deposit_currency
    await session.flush()
    return row


async def run(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    card_id: int,
    rule: str,
    trigger: str,
    amount_minor: int | None = None,
    deposit_currency: str | None = None,
) -> int | None:
    """Run `rule` for the card if it applies; the automatic top-up's `OrderId`, or None.

    `amount_minor` caps the top-up (a deposit's USD value); a capped top-up below the top-up
    minimum does not run. `DEPOSIT` runs only for a deposit in the rule's `Currency`."""
    setting = (await rules_of(session, company_id, card_id)).get(rule)
    if setting is None:
        # A rule's setting is never deleted, so a card without one never ran this rule and
        # has nothing of it to resume: most purchases end here, without the card's lock.
        return None
    # The card's lock, held until the top-up's funding row is committed, makes the month's
    # usage check and the top-up one step: triggers racing on one card (parallel deposits or
    # clearings) would all pass the check before any of them had funded.
    card = await lookup.find_card(session, company_id=company_id, card_id=card_id, lock=True)
    claim = Claim(company_id=company_id, key=f"auto-topup:{card_id}:{rule}:{trigger}", token="")
    earlier = await _funding_by_key(session, company_id, claim.derived_key(funding.LOAD_STEP))
    if earlier is not None:
        return await _resume(session, providers, claim, card, earlier)
    if not setting.enabled or card.status == CardStatus.CANCELLED:
        return None
    if rule == LOW_BALANCE:
        account = await funding.card_account(session, card)
        held = await ledger.balance_of(session, account)
        # Top-ups on their way to the card count: a clearing that lands while one is in
        # flight would otherwise start another for the same shortfall.
        expected = held.available + held.pending_credits
        if setting.threshold_minor is None or expected >= setting.threshold_minor:
            return None
    if rule == DEPOSIT and setting.deposit_currency != deposit_currency:
        return None
    value = setting.amount_minor
    if amount_minor is not None:
        value = min(value, amount_minor)
        if value < to_minor(funding.MIN_TOPUP, card.currency):
            return None
    used = await usage(session, card)
    if used.amount_minor + value > setting.monthly_limit_minor:
        return None
    funded = await funding.topup(
        session,
        providers,
        claim=claim,
        company_id=company_id,
        card_id=card_id,
        money=Money(value, card.currency),
        kind=FundingKind.AUTO_TOPUP,
        trigger=rule,
    )
    return funded.funding.id


async def _funding_by_key(
    session: AsyncSession, company_id: int, provider_key: str
) -> CardFunding | None:
    return await FundingRepository(session, company_id).by_provider_key(provider_key)


async def _resume(
    session: AsyncSession, providers: Providers, claim: Claim, card: Card, earlier: CardFunding
) -> int | None:
    """The trigger already ran (a retried deposit): finish a top-up left pending, answer the
    completed one, and never top up a second time."""
    if earlier.status == FundingStatus.FAILED:
        return None
    if earlier.status == FundingStatus.PENDING:
        claim.recovery_point = funding.RESERVED
        claim.state = {"funding_id": earlier.id}
        await funding.topup(
            session,
            providers,
            claim=claim,
            company_id=card.company_id,
            card_id=card.id,
            money=Money(earlier.amount_minor, earlier.currency),
            kind=FundingKind.AUTO_TOPUP,
            trigger=earlier.trigger,
        )
    return earlier.id
