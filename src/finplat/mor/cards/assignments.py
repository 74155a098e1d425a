"""Who uses a MOR card: assignment to a user of the company and unassignment.

A card is always issued to a user (the cards domain issues every card to a KYC-approved user's
account at the provider), so there is no unassigned ordering: a card ordered through the MOR
batch is assigned to the user it was ordered for, and a card ordered elsewhere counts as its
holder's until it is first unassigned. Unassignment returns the card's whole balance to the
merchant's wallet (the company's MASTER account) through the ordinary unload, with the tier's
unload fee, and assignment sweeps again whatever reached the card meanwhile: a new assignee
never inherits a balance.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards import service as cards
from finplat.cards.errors import CardBalanceNotZero
from finplat.cards.funding import service as funding
from finplat.cards.lookup import find_card
from finplat.cards.models import Card
from finplat.cards.service import CardView
from finplat.events import service as events
from finplat.idempotency.service import ephemeral_claim
from finplat.kit.clock import utcnow
from finplat.kit.money import Money
from finplat.kyc.approval import require_base_approval
from finplat.ledger import service as ledger
from finplat.mor.cards import load_request_states
from finplat.mor.cards.errors import MorCardAlreadyAssigned, MorCardNotReassignable
from finplat.mor.cards.models import MorCardAssignment
from finplat.mor.cards.repository import AssignmentRepository
from finplat.providers.names import BankProvider
from finplat.providers.registry import Providers

UNASSIGNMENT = "MOR_UNASSIGN"  # `trigger` of the unload that empties an unassigned card
EVENT_DOMAIN = "mor"


async def current_assignee(session: AsyncSession, card: Card) -> int | None:
    """The user the card is assigned to now: its open assignment's, the holder's when the card
    never had one, none when it was unassigned."""
    rows = await AssignmentRepository(session, card.company_id).of_card(card.id)
    if not rows:
        return card.user_id
    return next((r.user_id for r in rows if r.unassigned_at is None), None)


async def current_period(session: AsyncSession, card: Card) -> MorCardAssignment | None:
    """The open assignment of the card (None: never assigned through MOR, or unassigned)."""
    return await AssignmentRepository(session, card.company_id).current(card.id)


async def cards_assigned_to(session: AsyncSession, company_id: int, user_id: int) -> list[CardView]:
    """The cards whose current assignee is `user_id`, with their balances: what the bearer
    user's `GET /api/v2/mor/public/me/cards` lists (a cancelled card keeps its last assignee)."""
    found = await AssignmentRepository(session, company_id).cards_assigned_to(user_id)
    return await cards.views(session, found)


async def record_ordered(session: AsyncSession, card: Card) -> None:
    """A card ordered through the MOR batch starts assigned to the user it was ordered for
    (once: a retried order finds the card and its assignment)."""
    repo = AssignmentRepository(session, card.company_id)
    if not await repo.of_card(card.id):
        await repo.add(
            MorCardAssignment(card_id=card.id, user_id=card.user_id, assigned_at=card.created_at)
        )


async def assign(
    session: AsyncSession, providers: Providers, *, company_id: int, card_id: int, user_id: int
) -> Card:
    """Assign an unassigned card to a user of the company whose base KYC is approved. Assigning
    a card to its current assignee again changes nothing; another assignee first needs an
    unassignment (409 `MOR_CARD_ALREADY_ASSIGNED`). Whatever the card still holds goes back to
    the wallet first; money held by a pending purchase refuses it (409
    `CARD_BALANCE_NOT_ZERO`). A banking-provider card draws on its holder's budget: only its
    holder may have it (409 `MOR_CARD_NOT_REASSIGNABLE`)."""
    card = await find_card(session, company_id=company_id, card_id=card_id, lock=True)
    card.refuse_if_cancelled()
    await require_base_approval(session, company_id=company_id, user_id=user_id)
    assignee = await current_assignee(session, card)
    if assignee == user_id:
        return card
    if assignee is not None:
        raise MorCardAlreadyAssigned()
    if card.provider == BankProvider.BANKPROV.value and user_id != card.user_id:
        raise MorCardNotReassignable()
    await return_balance(session, providers, card)
    card = await find_card(session, company_id=company_id, card_id=card_id, lock=True)
    card.refuse_if_cancelled()
    if await current_assignee(session, card) is not None:
        raise MorCardAlreadyAssigned()  # a parallel assignment won
    view = (await cards.views(session, [card]))[0]
    if view.posted != 0 or view.available != 0:
        raise CardBalanceNotZero()
    await AssignmentRepository(session, company_id).add(
        MorCardAssignment(card_id=card.id, user_id=user_id, assigned_at=utcnow())
    )
    await events.record(
        session,
        company_id=company_id,
        type_="mor.card.assigned",
        domain=EVENT_DOMAIN,
        data={"cardId": card.id, "userId": user_id},
    )
    return card


async def unassign(
    session: AsyncSession, providers: Providers, *, company_id: int, card_id: int
) -> Card:
    """End the card's assignment and return its whole balance to the merchant's wallet (an
    ordinary unload, with the tier's unload fee); the user's pending load requests for it are
    cancelled. The assignment ends first, so no funding or load approval can reach the card
    for its former assignee once this has begun. Repeating it (after a provider timeout, or on
    a card already unassigned) sweeps again what the card holds. Money held by a pending
    purchase cannot be returned yet: 409 `CARD_BALANCE_NOT_ZERO` (the card stays unassigned;
    unassign again once the purchase settles)."""
    card = await find_card(session, company_id=company_id, card_id=card_id, lock=True)
    card.refuse_if_cancelled()
    repo = AssignmentRepository(session, company_id)
    now = utcnow()
    rows = await repo.of_card(card.id)
    former: int | None = None
    if not rows:
        former = card.user_id
        await repo.add(
            MorCardAssignment(
                card_id=card.id,
                user_id=card.user_id,
                assigned_at=card.created_at,
                unassigned_at=now,
            )
        )
    else:
        period = await repo.current(card.id, lock=True)
        if period is not None:
            former, period.unassigned_at = period.user_id, now
    if former is not None:
        await load_request_states.cancel_pending_of_card(
            session, company_id=company_id, card_id=card.id
        )
        await events.record(
            session,
            company_id=company_id,
            type_="mor.card.unassigned",
            domain=EVENT_DOMAIN,
            data={"cardId": card.id, "userId": former},
        )
    await session.commit()
    await return_balance(session, providers, card)
    card = await find_card(session, company_id=company_id, card_id=card_id, lock=True)
    view = (await cards.views(session, [card]))[0]
    if view.posted != 0 or view.available != 0:
        raise CardBalanceNotZero()
    return card


async def return_balance(session: AsyncSession, providers: Providers, card: Card) -> None:
    """Return what the card holds to the company's MASTER account through the ordinary unload.
    Fundings left pending by a provider timeout are settled first under their own keys, so a
    repeat never unloads twice; each sweep is a new unload of what is available then."""
    company_id, card_id = card.company_id, card.id
    await funding.settle_pending(session, providers, company_id=company_id, card_id=card_id)
    card = await find_card(session, company_id=company_id, card_id=card_id, lock=True)
    if card.provider_card_id is None:
        return  # never issued: it cannot hold money
    account = await funding.card_account(session, card)
    held = await ledger.balance_of(session, account)
    if held.available <= 0:
        return
    await funding.unload(
        session,
        providers,
        claim=ephemeral_claim(company_id),
        company_id=company_id,
        card_id=card_id,
        money=Money(held.available, card.currency),
        trigger=UNASSIGNMENT,
    )
