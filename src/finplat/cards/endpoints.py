"""Cards: order, read, list, transactions, cancellation and the secure widget."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query, Request, status

from finplat.cards import lookup, service
from finplat.cards.models import Card
from finplat.cards.schemas import (
    CardIdPath,
    CardOrder,
    CardResponse,
    CardsResponse,
    CardTransactionResponse,
    CardTransactionsPage,
    CardTransactionStatus,
    CardTransactionType,
    WidgetResponse,
)
from finplat.cards.timestamps import parse
from finplat.config import Settings
from finplat.errors import error_responses
from finplat.http import path_ids  # noqa: F401 - registers the {name:id} convertor
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.money import from_minor
from finplat.kit.pagination import PageParams
from finplat.kit.schemas import UserIdQuery

router = api_router(tags=["Cards"])

CONTROL_ERRORS = error_responses(400, 404, 409, 503)


async def _response(session: DbSession, card: Card) -> CardResponse:
    view = (await service.views(session, [card]))[0]
    return CardResponse.of(view.card, available=view.available, posted=view.posted)


@router.post(
    "/api/v2/cards",
    response_model=CardResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Order a card",
    description="Orders a card of the user's tier (`CardTypeId` from "
    "`GET /api/v2/tiers/card-tier/{tierId}`). The user's base KYC must be approved (409 "
    "`KYC_NOT_APPROVED`) and their account at the product's provider approved (opened here "
    "for the card provider and the switch provider's link; the banking provider's must be "
    "open: 409 `BANKING_ACCOUNT_NOT_ACTIVE`). The card starts `PENDING` and becomes `ACTIVE` "
    "(virtual) or `INACTIVE` (physical, activate after delivery) once the provider reports "
    "it produced. Safe to retry with `Idempotency-Key`. The response never carries the full "
    "number or CVV.",
    responses=error_responses(400, 404, 409, 503),
)
async def cards_order(
    body: CardOrder,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> CardResponse:
    claim = await claim_request(request, session, principal, idempotency_key)
    view = await service.order(
        session, providers, claim=claim, company_id=principal.company_id, body=body
    )
    return CardResponse.of(view.card, available=view.available, posted=view.posted)


@router.get(
    "/api/v2/cards",
    response_model=CardsResponse,
    summary="List a user's cards",
    description="Every card of the user, cancelled ones included (status `CANCELLED`), with "
    "masked numbers only (`cardNo` empty, `cvv` `***`) and balances.",
    responses=error_responses(400, 404, 503),
)
async def cards_list(
    userId: UserIdQuery,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CardsResponse:
    found = await service.list_cards(
        session, providers, company_id=principal.company_id, user_id=userId
    )
    return CardsResponse(
        Cards=[CardResponse.of(v.card, available=v.available, posted=v.posted) for v in found]
    )


@router.get(
    "/api/v2/cards/{cardId:id}",
    response_model=CardResponse,
    summary="A card's status and safe details",
    description="Masked number only. A missing user or card is 404; a user of another "
    "company is 401 (spec). A cancelled card the provider no longer exposes returns its "
    "local details.",
    responses=error_responses(400, 404, 503),
)
async def cards_detail(
    cardId: CardIdPath,
    userId: UserIdQuery,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CardResponse:
    view = await service.detail(
        session,
        providers,
        company_id=principal.company_id,
        user_id=userId,
        card_id=cardId,
    )
    return CardResponse.of(view.card, available=view.available, posted=view.posted)


@router.get(
    "/api/v2/cards/{cardId:id}/transactions",
    response_model=CardTransactionsPage,
    summary="A card's transactions",
    description="Newest first, from the card's provider. `OccurredAt` is the provider's "
    "timestamp (ISO 8601, Unix seconds or milliseconds), null when missing or invalid.",
    responses=error_responses(400, 404, 503),
)
async def cards_transactions(
    cardId: CardIdPath,
    userId: UserIdQuery,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    page: PageParams,
    types: Annotated[
        list[CardTransactionType] | None, Query(description="Only these types.")
    ] = None,
    statuses: Annotated[
        list[CardTransactionStatus] | None, Query(description="Only these statuses.")
    ] = None,
) -> CardTransactionsPage:
    card, found = await service.card_transactions(
        session,
        providers,
        company_id=principal.company_id,
        user_id=userId,
        card_id=cardId,
    )
    wanted_types = {t.value for t in types or []}
    wanted_statuses = {s.value for s in statuses or []}
    selected = [
        t
        for t in found
        if (not wanted_types or t.type in wanted_types)
        and (not wanted_statuses or t.status in wanted_statuses)
    ]
    window = selected[page.offset : page.offset + page.page_size + 1]
    return CardTransactionsPage(
        Items=[
            CardTransactionResponse(
                TransactionId=t.transaction_id,
                CardId=card.id,
                Type=CardTransactionType(t.type),
                Status=CardTransactionStatus(t.status),
                Amount=from_minor(t.amount_minor, t.currency),
                Currency=t.currency,
                Merchant=t.merchant,
                DeclineReason=t.decline_reason,
                OccurredAt=parse(t.timestamp),
            )
            for t in window[: page.page_size]
        ],
        Page=page.page,
        PageSize=page.page_size,
        HasMore=len(window) > page.page_size,
    )


async def _card(
    session: DbSession, principal: CurrentPrincipal, user_id: int, card_id: int
) -> Card:
    return await lookup.user_card(
        session, company_id=principal.company_id, user_id=user_id, card_id=card_id
    )


@router.delete(
    "/api/v2/cards/{cardId:id}",
    response_model=CardResponse,
    summary="Cancel a card permanently",
    description="Card-provider cards only (409 `CARD_CANCELLATION_NOT_SUPPORTED` for the "
    "others). An unpaid decline fee is collected from the card first (what it cannot pay is "
    "written off, `declineFeeWrittenOff` in the event); the rest of its balance returns to "
    "the company master account (an unload, with the tier's unload fee); money held by a "
    "pending purchase keeps it open (409 "
    "`CARD_BALANCE_NOT_ZERO`). The card becomes `CANCELLED` and `card.deleted` is sent with "
    "`newStatus` `CANCELLED`. Safe to retry after a provider timeout: a card the provider "
    "has cancelled already is finished without an unload, what it still holds booked back "
    "without the unload fee.",
    responses=CONTROL_ERRORS,
)
async def cards_cancel(
    cardId: CardIdPath,
    userId: UserIdQuery,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CardResponse:
    card = await _card(session, principal, userId, cardId)
    return await _response(session, await service.cancel(session, providers, card))


@router.get(
    "/api/v2/cards/{cardId:id}/widget",
    response_model=WidgetResponse,
    summary="A secure widget URL showing the full card details",
    description="The provider's page, the only place the full number and CVV appear. "
    "Single use, valid for 60 seconds.",
    responses=CONTROL_ERRORS,
)
async def cards_widget(
    cardId: CardIdPath,
    userId: UserIdQuery,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> WidgetResponse:
    card = await _card(session, principal, userId, cardId)
    settings: Settings = request.app.state.settings
    base_url = settings.public_base_url or str(request.base_url)
    found = await service.widget(session, providers, card, base_url=base_url)
    return WidgetResponse(Url=found.url, ExpiresAt=found.expires_at)
