"""What a card's cancellation settles, whoever cancelled it.

A partner cancels a card with `DELETE /api/v2/cards/{cardId}` (`service.cancel`: the card is
emptied at the provider first). A card provider may also cancel a card on its own (suspected
fraud, a closed programme) and report it with `card.status_changed` `CANCELLED`
(`apply_provider_cancellation`). Either way the card is `CANCELLED`, `card.deleted` is sent
(`data.cancelledBy` `PARTNER` or `PROVIDER`), and no money stays on it:

* a provider that cancels a card returns what the card held to the programme's funds, so the
  card's available ledger balance is booked back at once (`return_balance`): first to an
  unpaid decline fee, the rest to the company master account, with no unload fee (the partner
  did not ask for the unload);
* whatever the fee still lacks is written off (`decline_fees.write_off`);
* money that reaches the card's ledger account later (a funding in flight that settles, a
  purchase hold released) is booked back by the reconciliation run
  (`finplat.reconciliation.cancelled_cards`), so a cancelled card's balance ends at zero.
"""

from __future__ import annotations

from enum import StrEnum

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards.funding import decline_fees
from finplat.cards.funding import service as funding
from finplat.cards.funding.models import CardFunding
from finplat.cards.funding.service import CANCELLATION, FundingKind, FundingStatus
from finplat.cards.models import Card
from finplat.cards.repository import CardRepository
from finplat.cards.status import CardStatus
from finplat.events import service as events
from finplat.kit.clock import utcnow
from finplat.kit.money import from_minor
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.service import CompanyAccount

log = structlog.get_logger("finplat.cards.cancellation")

RETURN_CODE = "card.cancellation_return"


class CancelledBy(StrEnum):
    PARTNER = "PARTNER"  # DELETE /api/v2/cards/{cardId}
    PROVIDER = "PROVIDER"  # the card provider, on its own


async def record_cancelled(
    session: AsyncSession, card: Card, *, previous: str, cancelled_by: CancelledBy
) -> None:
    """What every cancellation records once the provider has cancelled the card, in one
    transaction: when, the decline fee the card could not pay written off, and `card.deleted`
    (with `declineFeeWrittenOff` and `cancelledBy`)."""
    card.cancelled_at = utcnow()
    written_off_minor = await decline_fees.write_off(session, card)
    await events.record(
        session,
        company_id=card.company_id,
        type_="card.deleted",
        domain="card",
        provider=card.provider,
        data={
            "cardId": card.id,
            "userId": card.user_id,
            "previousStatus": previous,
            "newStatus": CardStatus.CANCELLED.value,
            "declineFeeWrittenOff": from_minor(written_off_minor, card.currency),
            "cancelledBy": cancelled_by.value,
        },
    )


async def apply_provider_cancellation(
    session: AsyncSession,
    company_id: int,
    card_id: int,
    *,
    cancelled_by: CancelledBy = CancelledBy.PROVIDER,
) -> None:
    """The provider has cancelled the card: record it (a cancelled card accepts no further
    money movement), book back what the card holds, write off the fee it cannot pay and send
    `card.deleted`. `cancelled_by` is `PROVIDER` for its report, `PARTNER` for a partner's
    cancellation once the provider has answered it (`service.cancel`). Nothing for a card
    already cancelled (a partner's cancellation reported back, a parallel one, or a repeated
    report): `card.deleted` is sent once."""
    card = await CardRepository(session, company_id).find(card_id, lock=True)
    if card is None or card.status == CardStatus.CANCELLED:
        return
    previous = card.status
    card.take_provider_status(CardStatus.CANCELLED)
    card.provider_block_pending = False  # nothing left to block at the provider
    card.updated_at = utcnow()
    await session.flush()
    await return_balance(session, card)  # before the write-off: the fee is paid first
    await record_cancelled(session, card, previous=previous, cancelled_by=cancelled_by)
    log.info(
        "card_cancelled_at_provider",
        card_id=card.id,
        previous_status=previous,
        cancelled_by=cancelled_by.value,
    )


async def return_balance(session: AsyncSession, card: Card) -> list[CardFunding]:
    """Book a cancelled card's available balance back (the card locked by the caller): an
    unpaid decline fee first, to fee revenue, then the rest to the master account, each a
    posted ledger transfer recorded as a completed funding with trigger `CANCELLATION` (a
    `DECLINE_FEE`, then an `UNLOAD` without fee). Only what is available: money a funding in
    flight reserves or announces is not, and whatever its outcome leaves on the card is
    booked back by the reconciliation run. Returns the fundings written."""
    if card.status != CardStatus.CANCELLED:
        return []
    account = await funding.card_account(session, card)
    held = await ledger.balance_of(session, account)
    if held.available <= 0:
        return []
    fee = min(card.outstanding_fee_minor, held.available)
    written: list[CardFunding] = []
    if fee:
        written.append(await _book_back(session, card, account.id, fee, FundingKind.DECLINE_FEE))
        card.outstanding_fee_minor -= fee
    if held.available - fee:
        written.append(
            await _book_back(session, card, account.id, held.available - fee, FundingKind.UNLOAD)
        )
    await session.flush()
    return written


async def _book_back(
    session: AsyncSession, card: Card, account_id: int, amount: int, kind: FundingKind
) -> CardFunding:
    to = CompanyAccount.FEE_REVENUE if kind is FundingKind.DECLINE_FEE else CompanyAccount.MASTER
    target = await ledger.company_account(
        session, company_id=card.company_id, kind=to, currency=card.currency
    )
    earlier = await funding.cancellation_fundings(session, card, kind)
    key = f"card-cancel-return:{card.id}:{kind.value}:{earlier}"
    await ledger.post_transfer(
        session,
        company_id=card.company_id,
        legs=[Leg(account_id, -amount), Leg(target.id, amount)],
        code=RETURN_CODE,
        reference=key,
        details={"cardId": card.id, "kind": kind.value},
    )
    row = CardFunding(
        company_id=card.company_id,
        card_id=card.id,
        kind=kind.value,
        status=FundingStatus.COMPLETED.value,
        currency=card.currency,
        amount_minor=amount,
        fee_minor=0,
        fee_paid_minor=0,
        provider_key=key,
        trigger=CANCELLATION,
        completed_at=utcnow(),
    )
    session.add(row)
    await session.flush()
    return row
