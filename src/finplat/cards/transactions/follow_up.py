"""What follows a purchase decided on finplat's balance: a decline costs the tier's decline fee
(`decline_fees.charge`) and, declined for insufficient funds, runs the card's failed-transaction
auto top-up; an approval runs its low-balance one (`auto_topup`). A partner-hosted purchase has
none (the balance is the partner's).

The sandbox purchase runs them before it answers. The card provider's real-time request cannot
wait for the provider calls they make: its purchase is marked due (`follow_up_at`, written with
the decision) and the background job runs it (`run_due`). The fee is taken exactly once: the
mark is cleared in the transaction that takes it (or blocks the card for it). An approval's
top-up runs before its mark is cleared, keyed by the purchase, so a run cut short and repeated
finishes the same top-up instead of making a second.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.cards import lookup
from finplat.cards.funding import auto_topup, decline_fees
from finplat.cards.funding.decline_fees import NO_FEE, DeclineFee
from finplat.cards.models import Card
from finplat.cards.transactions.decision import INSUFFICIENT_FUNDS
from finplat.cards.transactions.models import CardTransaction
from finplat.cards.transactions.repository import (
    CardTransactionRepository,
    clear_follow_ups_with_nothing_to_do,
    follow_ups_due,
)
from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.errors import ApiError
from finplat.kit.clock import utcnow
from finplat.providers.registry import Providers

log = structlog.get_logger("finplat.cards.transactions")

BATCH = 200
RETRY_AFTER = timedelta(minutes=1)


async def decline_fee(
    session: AsyncSession, providers: Providers, *, card: Card, txn: CardTransaction
) -> DeclineFee:
    """The decline fee of a declined purchase, committed (whatever the auto top-up after it
    does); none for an approval."""
    if not txn.declined:
        return NO_FEE
    fee = await decline_fees.charge(
        session, providers, card=card, transaction_id=txn.authorization_id
    )
    await session.commit()
    return fee


def triggered_rule(txn: CardTransaction) -> str | None:
    """The auto top-up rule the decided purchase triggers: low balance after an approval,
    failed transaction after a decline for insufficient funds, none after another decline."""
    if not txn.declined:
        return auto_topup.LOW_BALANCE
    return auto_topup.FAILED_TX if txn.decline_reason == INSUFFICIENT_FUNDS else None


async def top_up(
    session: AsyncSession, providers: Providers, card: Card, rule: str | None, *, trigger: str
) -> int | None:
    """Run the card's auto top-up `rule` for the purchase `trigger`: the top-up's `OrderId`, or
    None when the rule does not apply or the top-up cannot be made (the purchase stands)."""
    if rule is None:
        return None
    # Read before the rollback below expires the card (an expired attribute would be loaded
    # lazily, which the async session cannot do).
    company_id, card_id = card.company_id, card.id
    try:
        return await auto_topup.run(
            session, providers, company_id=company_id, card_id=card_id, rule=rule, trigger=trigger
        )
    except ApiError as exc:
        await session.rollback()
        log.warning("auto_topup_failed", card_id=card_id, code=exc.code)
        await session.refresh(card)  # the rollback expired it
        return None


async def run_due(
    factory: async_sessionmaker[AsyncSession],
    providers: Providers,
    *,
    now: datetime | None = None,
) -> int:
    """One round over the purchases whose follow-up is due, every company's, oldest first;
    returns how many were followed up. The approvals with nothing to follow (no low-balance
    auto top-up on their card) are cleared together first, in one statement. A purchase
    whose follow-up fails on something unexpected stays due, a minute later."""
    at = now or utcnow()
    async with unit_of_work(factory) as session:
        await clear_follow_ups_with_nothing_to_do(session, now=at)
        due = await follow_ups_due(session, now=at, limit=BATCH)
    done = 0
    for company_id, txn_id in due:
        try:
            async with unit_of_work(factory) as session:
                bind_company(session, company_id)
                done += await _follow_up(session, providers, company_id, txn_id, at)
        except Exception as exc:  # one purchase's failure must not hold up the others
            log.error("card_purchase_follow_up_failed", txn_id=txn_id, error=type(exc).__name__)
            # Behind the others, so that failing purchases never fill every round's batch.
            async with unit_of_work(factory) as session:
                bind_company(session, company_id)
                await CardTransactionRepository(session, company_id).follow_up_later(
                    txn_id, at=at + RETRY_AFTER
                )
    return done


async def _follow_up(
    session: AsyncSession, providers: Providers, company_id: int, txn_id: int, now: datetime
) -> bool:
    txns = CardTransactionRepository(session, company_id)
    found = await txns.with_card(txn_id)
    if found is None:
        return False
    # The card's lock first, as every purchase path takes it; then the purchase read again.
    await lookup.find_card(session, company_id=company_id, card_id=found[1].id, lock=True)
    found = await txns.with_card(txn_id)
    assert found is not None  # purchases are never deleted
    txn, card = found
    if txn.follow_up_at is None or txn.follow_up_at > now:
        return False  # another worker's round ran it
    trigger, declined = txn.authorization_id, txn.declined
    if declined:
        await txns.follow_up_done(txn_id)  # committed with the fee: it is taken once
    await decline_fee(session, providers, card=card, txn=txn)
    await top_up(session, providers, card, triggered_rule(txn), trigger=trigger)
    if not declined:
        await txns.follow_up_done(txn_id)
        await session.commit()
    return True
