"""Card transactions: every purchase with the events that moved it."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

from finplat.cards import lookup
from finplat.cards.transactions import service
from finplat.cards.transactions.purchase import PurchaseStatus
from finplat.cards.transactions.schemas import (
    CardPurchase,
    CardPurchasePage,
    CardTransactionIdPath,
)
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, DbSession, api_router
from finplat.kit.pagination import PageParams
from finplat.kit.schemas import MAX_ID, PARAMETER_ID
from finplat.users import service as users

router = api_router(tags=["Card transactions"])


@router.get(
    "/api/v2/card-transactions",
    response_model=CardPurchasePage,
    summary="List card transactions (purchases)",
    description="Newest first. Each purchase (one provider authorization) with its amounts "
    "(authorized, held, reversed, cleared, refunded), the decision (`ResponseCode`, "
    "`DeclineReason`, `RulesFired`) and its events in the order they arrived. Filter by "
    "`userId`, `cardId` and `statuses`; an unknown user or card is 404.",
    responses=error_responses(400, 404),
)
async def card_transactions_list(
    session: DbSession,
    principal: CurrentPrincipal,
    page: PageParams,
    userId: Annotated[
        int | None, Query(ge=1, le=MAX_ID, description="Only this user's."), PARAMETER_ID
    ] = None,
    cardId: Annotated[
        int | None, Query(ge=1, le=MAX_ID, description="Only this card's."), PARAMETER_ID
    ] = None,
    statuses: Annotated[
        list[PurchaseStatus] | None, Query(description="Only these statuses.")
    ] = None,
) -> CardPurchasePage:
    company_id = principal.company_id
    if userId is not None:
        await users.get_user(session, company_id=company_id, user_id=userId)
    if cardId is not None:
        await lookup.find_card(session, company_id=company_id, card_id=cardId, user_id=userId)
    found, events = await service.page(
        session,
        company_id=company_id,
        card_id=cardId,
        user_id=userId,
        statuses=[s.value for s in statuses or []],
        offset=page.offset,
        limit=page.page_size + 1,
    )
    return CardPurchasePage(
        Items=[CardPurchase.of(t, events[t.id]) for t in found[: page.page_size]],
        Page=page.page,
        PageSize=page.page_size,
        HasMore=len(found) > page.page_size,
    )


@router.get(
    "/api/v2/card-transactions/{cardTransactionId}",
    response_model=CardPurchase,
    summary="Read a card transaction (purchase) with its events",
    description="404 `CARD_TRANSACTION_NOT_FOUND` for an unknown id (or another company's).",
    responses=error_responses(400, 404),
)
async def card_transactions_read(
    cardTransactionId: CardTransactionIdPath, session: DbSession, principal: CurrentPrincipal
) -> CardPurchase:
    txn = await service.find(session, company_id=principal.company_id, txn_id=cardTransactionId)
    events = await service.events_of(session, company_id=principal.company_id, txn=txn)
    return CardPurchase.of(txn, events)
