"""MOR cards through the cards domain: the merchant's cardholders, batch ordering, funding from
the merchant's wallet, cancellation, the assignee's transactions and the secure widget. Every
money path and provider call is the cards domain's own; this adds who uses the card."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards import service as cards
from finplat.cards.funding import service as funding
from finplat.cards.lookup import find_card
from finplat.cards.models import Card
from finplat.cards.repository import CardRepository
from finplat.cards.schemas import CardOrder
from finplat.cards.timestamps import parse
from finplat.errors import ApiError
from finplat.idempotency import service as idempotency
from finplat.idempotency.service import Claim
from finplat.kit.money import Money
from finplat.kit.pagination import PageRequest, PageSlice, fetch_page
from finplat.mor.cards import assignments, load_request_states
from finplat.mor.cards.errors import CardholderNotFound, MorCardNotAssigned
from finplat.mor.cards.repository import CardholderRepository
from finplat.providers.cards.port import ProviderCardTransaction, WidgetSession
from finplat.providers.registry import Providers
from finplat.users import service as users
from finplat.users.models import User

MAX_BATCH = 50
ORDERING = "ordering"  # the batch's recovery point: how many items were handled


# ---------------------------------------------------------------------------- cardholders


@dataclass(frozen=True)
class Cardholder:
    user: User
    cards: int


async def cardholders(
    session: AsyncSession,
    *,
    company_id: int,
    email: str | None,
    status: str | None,
    request: PageRequest,
) -> PageSlice[Cardholder]:
    """The company's users who are the current assignee of at least one card, oldest first."""
    repo = CardholderRepository(session, company_id)
    found = await fetch_page(session, repo.cardholders(email=email, status=status), request)
    counts = await repo.card_counts([u.id for u in found.rows])
    return PageSlice(
        rows=[Cardholder(u, counts.get(u.id, 0)) for u in found.rows], has_more=found.has_more
    )


async def cardholder(session: AsyncSession, *, company_id: int, user_id: int) -> Cardholder:
    """A cardholder: an unknown user (another company's included) is 404 `USER_NOT_FOUND`, a
    user of the company holding no card 404 `MOR_CARDHOLDER_NOT_FOUND`."""
    user = await users.get_user(session, company_id=company_id, user_id=user_id)
    held = await assignments.cards_assigned_to(session, company_id, user_id)
    if not held:
        raise CardholderNotFound()
    return Cardholder(user, len(held))


# ------------------------------------------------------------------------------ ordering


@dataclass(frozen=True)
class BatchItem:
    index: int
    card: Card | None
    refusal: ApiError | None


async def order_batch(
    session: AsyncSession,
    providers: Providers,
    *,
    claim: Claim,
    company_id: int,
    orders: list[CardOrder],
) -> list[BatchItem]:
    """Order each card through the ordinary card order (`finplat.cards.service.order`), each
    under a provider key derived from the batch's `Idempotency-Key` and its position, so a
    retried batch creates each card once; each card starts assigned to the user it was ordered
    for. An item the cards domain refuses (4xx) is reported with its code and the batch goes
    on; a technical failure (5xx) answers the whole batch, and a retry with the same key
    resumes it (the cards made are found again by their keys)."""
    # A resumed batch's items are resumed too: the cards it made before are found first.
    items_from = claim.recovery_point
    # The claim commits before the first card: a refused item rolls back only its own work.
    await idempotency.checkpoint(session, claim, ORDERING)
    outcomes: list[tuple[int, int | None, ApiError | None]] = []
    for index, order in enumerate(orders):
        item_claim = Claim(
            company_id=company_id,
            key=f"{claim.key}\tcard\t{index}",
            token="",
            recovery_point=items_from,
        )
        try:
            ordered = await cards.order(
                session, providers, claim=item_claim, company_id=company_id, body=order
            )
        except ApiError as error:
            if error.status >= 500:
                raise
            await session.rollback()
            outcomes.append((index, None, error))
            continue
        await assignments.record_ordered(session, ordered.card)
        outcomes.append((index, ordered.card.id, None))
        await idempotency.checkpoint(session, claim, ORDERING, handled=index + 1)
    repo = CardRepository(session, company_id)
    items = []
    for index, card_id, refused in outcomes:
        made = await repo.find(card_id) if card_id is not None else None
        items.append(BatchItem(index, made, refused))
    return items


# --------------------------------------------------------------------------------- money


async def fund(
    session: AsyncSession,
    providers: Providers,
    *,
    claim: Claim,
    company_id: int,
    card_id: int,
    money: Money,
) -> funding.Funded:
    """Load an assigned card from the merchant's wallet (the company's MASTER account): the
    ordinary top-up (`finplat.cards.funding.service.topup`), its fee and refusals. An
    unassigned card is 409 `MOR_CARD_NOT_ASSIGNED`: money loaded onto it would belong to
    nobody."""
    if claim.recovery_point == idempotency.STARTED:
        card = await find_card(session, company_id=company_id, card_id=card_id, lock=True)
        card.refuse_if_cancelled()
        if await assignments.current_assignee(session, card) is None:
            raise MorCardNotAssigned()
    return await funding.topup(
        session, providers, claim=claim, company_id=company_id, card_id=card_id, money=money
    )


async def cancel(
    session: AsyncSession, providers: Providers, *, company_id: int, card_id: int
) -> Card:
    """The cards domain's cancellation (`finplat.cards.service.cancel`): an unpaid decline fee
    is collected, the rest of the balance returns to the merchant's wallet through an unload
    with the tier's unload fee, money held by a pending purchase keeps it open (409
    `CARD_BALANCE_NOT_ZERO`). The card keeps its last assignee; its pending load requests are
    cancelled."""
    card = await find_card(session, company_id=company_id, card_id=card_id)
    cancelled = await cards.cancel(session, providers, card)
    await load_request_states.cancel_pending_of_card(
        session, company_id=company_id, card_id=card_id
    )
    return cancelled


# -------------------------------------------------------------------------- reads, widget


async def assignee_transactions(
    session: AsyncSession, providers: Providers, *, company_id: int, card_id: int
) -> tuple[Card, list[ProviderCardTransaction]]:
    """The card's transactions (the cards domain's, from its provider) of its current
    assignee's period: since the open assignment began; none for an unassigned card (what
    earlier assignees did is not the next one's to see). A card never assigned through the MOR
    routes is its holder's from its order on: all of them."""
    card = await find_card(session, company_id=company_id, card_id=card_id)
    rows = await assignments.current_period(session, card)
    if rows is None and await assignments.current_assignee(session, card) is None:
        return card, []
    since: datetime | None = rows.assigned_at if rows is not None else None
    card, found = await cards.card_transactions(
        session, providers, company_id=company_id, user_id=card.user_id, card_id=card.id
    )
    if since is None:
        return card, found
    return card, [t for t in found if (at := parse(t.timestamp)) is not None and at >= since]


async def widget(
    session: AsyncSession, providers: Providers, *, company_id: int, card_id: int, base_url: str
) -> WidgetSession:
    """The cards domain's secure widget: the provider's page is the only place the full number
    and CVV appear."""
    card = await find_card(session, company_id=company_id, card_id=card_id)
    return await cards.widget(session, providers, card, base_url=base_url)


async def card_with_assignee(
    session: AsyncSession, *, company_id: int, card_id: int
) -> tuple[cards.CardView, int | None]:
    card = await find_card(session, company_id=company_id, card_id=card_id)
    view = (await cards.views(session, [card]))[0]
    return view, await assignments.current_assignee(session, card)
