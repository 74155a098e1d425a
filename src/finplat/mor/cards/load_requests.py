"""Load requests: a card's assignee asks for money on it, the merchant approves (the card is
funded from the merchant's wallet once, keyed by the request) or declines."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards.funding import service as funding
from finplat.cards.lookup import find_card
from finplat.errors import ApiError
from finplat.events import service as events
from finplat.idempotency.service import Claim
from finplat.kit.money import Money
from finplat.kit.pagination import PageRequest, PageSlice, fetch_page
from finplat.mor.cards import assignments
from finplat.mor.cards.errors import (
    LoadRequestNotFound,
    LoadRequestNotPending,
    MorCardNotAssignedToUser,
)
from finplat.mor.cards.load_request_states import MorLoadRequestStatus, event_data, move
from finplat.mor.cards.models import MorLoadRequest
from finplat.mor.cards.repository import LoadRequestRepository
from finplat.providers.registry import Providers
from finplat.users import service as users

S = MorLoadRequestStatus
LOAD_TRIGGER = "MOR_LOAD_REQUEST"  # `trigger` of the top-up an approval makes


async def create(
    session: AsyncSession,
    *,
    company_id: int,
    user_id: int,
    card_id: int,
    money: Money,
    note: str | None,
) -> MorLoadRequest:
    """A user asks for `money` on a card assigned to them (409 `MOR_CARD_NOT_ASSIGNED_TO_USER`
    otherwise; a cancelled card is 409 `CARD_CANCELLED`); `PENDING`, event
    `mor.load_request.pending`."""
    await users.get_user(session, company_id=company_id, user_id=user_id)
    card = await find_card(session, company_id=company_id, card_id=card_id)
    card.refuse_if_cancelled()
    if await assignments.current_assignee(session, card) != user_id:
        raise MorCardNotAssignedToUser()
    if money.currency != card.currency:
        raise funding.CardCurrencyMismatch(f"The card holds {card.currency}.")
    row = await LoadRequestRepository(session, company_id).add(
        MorLoadRequest(
            user_id=user_id,
            card_id=card.id,
            amount_minor=money.minor,
            currency=money.currency,
            note=note,
            status=S.PENDING.value,
        )
    )
    await events.record(
        session,
        company_id=company_id,
        type_="mor.load_request.pending",
        domain="mor",
        data=event_data(row),
    )
    return row


async def get(session: AsyncSession, *, company_id: int, request_id: int) -> MorLoadRequest:
    row = await LoadRequestRepository(session, company_id).find(request_id)
    if row is None:
        raise LoadRequestNotFound()
    return row


async def page(
    session: AsyncSession,
    *,
    company_id: int,
    status: str | None,
    user_id: int | None,
    card_id: int | None,
    request: PageRequest,
) -> PageSlice[MorLoadRequest]:
    if user_id is not None:
        await users.get_user(session, company_id=company_id, user_id=user_id)
    stmt = LoadRequestRepository(session, company_id).listing(
        status=status, user_id=user_id, card_id=card_id
    )
    return await fetch_page(session, stmt, request)


async def _locked(session: AsyncSession, company_id: int, request_id: int) -> MorLoadRequest:
    row = await LoadRequestRepository(session, company_id).find(request_id, lock=True)
    if row is None:
        raise LoadRequestNotFound()
    return row


async def decline(
    session: AsyncSession, *, company_id: int, request_id: int, reason: str | None
) -> MorLoadRequest:
    """A pending request ends `DECLINED` (declining it again answers it unchanged); a decided
    one is 409 `MOR_LOAD_REQUEST_NOT_PENDING`."""
    row = await _locked(session, company_id, request_id)
    if row.status == S.DECLINED:
        return row
    if row.status != S.PENDING:
        raise LoadRequestNotPending()
    row.decline_reason = reason
    await move(session, row, S.DECLINED)
    return row


async def approve(
    session: AsyncSession, providers: Providers, *, company_id: int, request_id: int
) -> MorLoadRequest:
    """Approve a pending request: the card is topped up from the merchant's wallet (the
    ordinary top-up, with its fee) under a key derived from the request, so approvals in
    parallel or retried fund it once; `FUNDED` when loaded. A refused top-up (the wallet short,
    the provider's refusal) ends it `FAILED` with the refusal's code, and the user may ask
    again. A card no longer assigned to the requester ends it `CANCELLED`. Approving a funded
    request answers it unchanged; a declined, failed or cancelled one is 409
    `MOR_LOAD_REQUEST_NOT_PENDING`. A provider timeout is 503: approve again to finish it."""
    # Locks are taken card first, then request, as an unassignment and the top-up's own
    # completion take them: the card's lock orders this approval with a parallel one, an
    # unassignment and a funding (the assignee is checked and the top-up reserved under it).
    card_id = (await get(session, company_id=company_id, request_id=request_id)).card_id
    card = await find_card(session, company_id=company_id, card_id=card_id, lock=True)
    row = await _locked(session, company_id, request_id)
    if row.status == S.FUNDED:
        return row
    if row.status not in (S.PENDING, S.APPROVED):
        raise LoadRequestNotPending()
    if row.status == S.PENDING:
        if card.status == "CANCELLED" or (
            await assignments.current_assignee(session, card) != row.user_id
        ):
            await move(session, row, S.CANCELLED)
            return row
        await move(session, row, S.APPROVED)
    key = f"mor\tload-request\t{row.id}"  # a tab: no client's Idempotency-Key can be this
    claim = Claim(company_id=company_id, key=key, token="")
    earlier = await funding.funding_by_key(
        session, company_id, claim.derived_key(funding.LOAD_STEP)
    )
    if earlier is not None:
        claim = Claim(
            company_id=company_id,
            key=key,
            token="",
            recovery_point=funding.RESERVED,
            state={"funding_id": earlier.id},
        )
    try:
        funded = await funding.topup(
            session,
            providers,
            claim=claim,
            company_id=company_id,
            card_id=card.id,
            money=Money(row.amount_minor, row.currency),
            trigger=LOAD_TRIGGER,
        )
    except ApiError as refusal:
        if refusal.status >= 500:
            raise
        # Nothing of the refused top-up stands but what it committed itself (a voided
        # reservation): start again from the request.
        await session.rollback()
        row = await _locked(session, company_id, request_id)
        if row.status in (S.PENDING, S.APPROVED):
            row.failure_code = refusal.code
            await move(session, row, S.FAILED)
        return row
    funding_id = funded.funding.id
    row = await _locked(session, company_id, request_id)
    if row.status == S.APPROVED:
        row.funding_id = funding_id
        await move(session, row, S.FUNDED)
    return row
