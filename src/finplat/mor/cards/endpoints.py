"""MOR cards under `/api/v2/mor/public`: cardholders, batch ordering, assignment, funding from
the merchant's wallet, cancellation, the assignee's transactions, the secure widget and load
requests. Every id is the key's company's: another company's is 404."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query, Request, status

from finplat.cards import service as cards
from finplat.cards.schemas import (
    CardIdPath,
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
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.fields import EmailAddress
from finplat.kit.money import from_minor, requested_amount
from finplat.kit.pagination import PageParams
from finplat.kit.schemas import MAX_ID, PARAMETER_ID, UserIdPath
from finplat.mor.access import PREFIX, mor_router
from finplat.mor.cards import assignments, load_requests, service
from finplat.mor.cards.load_request_states import MorLoadRequestStatus
from finplat.mor.cards.schemas import (
    MorCardAssignRequest,
    MorCardBatchItem,
    MorCardBatchRequest,
    MorCardBatchResponse,
    MorCardFundRequest,
    MorCardFundResponse,
    MorCardholderDetail,
    MorCardholderResponse,
    MorCardholdersPage,
    MorCardResponse,
    MorLoadRequestCreate,
    MorLoadRequestDecline,
    MorLoadRequestResponse,
    MorLoadRequestsPage,
)

router = mor_router(tags=["MOR"])

LoadRequestIdPath = Annotated[
    int, Path(ge=1, le=MAX_ID, description="The load request's `Id`."), PARAMETER_ID
]
IdQuery = Annotated[int | None, Query(ge=1, le=MAX_ID), PARAMETER_ID]


async def _card(session: DbSession, company_id: int, card_id: int) -> MorCardResponse:
    view, assignee = await service.card_with_assignee(
        session, company_id=company_id, card_id=card_id
    )
    return MorCardResponse.of_view(view, assignee)


# ---------------------------------------------------------------------------- cardholders


@router.get(
    f"{PREFIX}/cardholders",
    response_model=MorCardholdersPage,
    summary="The MOR merchant's cardholders",
    description="Users of the company who are the current assignee of at least one card "
    "(a cancelled card keeps its last assignee), oldest first; `email` narrows to one address "
    "(case-insensitive).",
    responses=error_responses(400),
)
async def mor_cardholders(
    session: DbSession,
    principal: CurrentPrincipal,
    page: PageParams,
    email: Annotated[EmailAddress | None, Query(description="Only this email address.")] = None,
) -> MorCardholdersPage:
    found = await service.cardholders(
        session, company_id=principal.company_id, email=email, status=None, request=page
    )
    return MorCardholdersPage(
        Items=[MorCardholderResponse.of(h) for h in found.rows],
        Page=page.page,
        PageSize=page.page_size,
        HasMore=found.has_more,
    )


@router.get(
    f"{PREFIX}/cardholders/{{userId:id}}",
    response_model=MorCardholderDetail,
    summary="A cardholder and the cards assigned to them",
    description="404 `USER_NOT_FOUND` for a user who is not the company's (another "
    "company's included), 404 `MOR_CARDHOLDER_NOT_FOUND` for a user of the company holding "
    "no card.",
    responses=error_responses(400, 404),
)
async def mor_cardholder(
    userId: UserIdPath, session: DbSession, principal: CurrentPrincipal
) -> MorCardholderDetail:
    holder = await service.cardholder(session, company_id=principal.company_id, user_id=userId)
    views = await assignments.cards_assigned_to(session, principal.company_id, userId)
    return MorCardholderDetail(
        **MorCardholderResponse.of(holder).model_dump(),
        Cards=[MorCardResponse.of_view(v, userId) for v in views],
    )


# ------------------------------------------------------------------------------- cards


@router.post(
    f"{PREFIX}/cards/batch",
    response_model=MorCardBatchResponse,
    summary="Order many cards at once",
    description=f"1 to {service.MAX_BATCH} orders, each as `POST /api/v2/cards` takes it "
    "(`UserId`, `CardTypeId` from the MOR card products, `Phone`, ...), each through the "
    "ordinary card order and answered on its own: `CREATED` with the card (assigned to its "
    "`UserId`) or `REFUSED` with the error the single order would have answered. Idempotent "
    "as a whole with `Idempotency-Key`: a retry answers the first result and creates each "
    "card once; after a 503 it resumes where the batch stopped.",
    responses=error_responses(400, 409, 503),
)
async def mor_cards_batch(
    body: MorCardBatchRequest,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> MorCardBatchResponse:
    claim = await claim_request(request, session, principal, idempotency_key)
    items = await service.order_batch(
        session, providers, claim=claim, company_id=principal.company_id, orders=body.Cards
    )
    made = [i.card for i in items if i.card is not None]
    views = {v.card.id: v for v in await cards.views(session, made)} if made else {}
    answered = [
        MorCardBatchItem.of(i, views.get(i.card.id) if i.card is not None else None) for i in items
    ]
    created = sum(1 for a in answered if a.Result == "CREATED")
    return MorCardBatchResponse(Items=answered, Created=created, Refused=len(answered) - created)


@router.get(
    f"{PREFIX}/cards/{{cardId:id}}",
    response_model=MorCardResponse,
    summary="A MOR card and its assignee",
    description="The card as the cards domain shows it (masked number only) with `AssignedUserId`.",
    responses=error_responses(400, 404),
)
async def mor_card(
    cardId: CardIdPath, session: DbSession, principal: CurrentPrincipal
) -> MorCardResponse:
    return await _card(session, principal.company_id, cardId)


@router.post(
    f"{PREFIX}/cards/{{cardId:id}}/assign",
    response_model=MorCardResponse,
    summary="Assign a card to a user of the company",
    description="The card must be unassigned (409 `MOR_CARD_ALREADY_ASSIGNED`; assigning it "
    "to its assignee again changes nothing) and the user's base KYC approved (409 "
    "`KYC_NOT_APPROVED`). Whatever the card still holds returns to the merchant's wallet "
    "first, so a new assignee never inherits a balance (money held by a pending purchase: "
    "409 `CARD_BALANCE_NOT_ZERO`). A banking-provider card stays with its holder (409 "
    "`MOR_CARD_NOT_REASSIGNABLE`). Event `mor.card.assigned`.",
    responses=error_responses(400, 404, 409, 503),
)
async def mor_card_assign(
    cardId: CardIdPath,
    body: MorCardAssignRequest,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> MorCardResponse:
    await assignments.assign(
        session, providers, company_id=principal.company_id, card_id=cardId, user_id=body.UserId
    )
    return await _card(session, principal.company_id, cardId)


@router.post(
    f"{PREFIX}/cards/{{cardId:id}}/unassign",
    response_model=MorCardResponse,
    summary="Unassign a card; its balance returns to the merchant's wallet",
    description="Ends the assignment (event `mor.card.unassigned`), cancels the user's "
    "pending load requests for the card, and unloads its whole available balance to the "
    "company's master account (the ordinary unload, with the tier's unload fee). Money held "
    "by a pending purchase cannot return yet: 409 `CARD_BALANCE_NOT_ZERO`, the card stays "
    "unassigned; unassign again later (also after a 503) to sweep it.",
    responses=error_responses(400, 404, 409, 503),
)
async def mor_card_unassign(
    cardId: CardIdPath,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> MorCardResponse:
    await claim_request(request, session, principal, idempotency_key)
    await assignments.unassign(session, providers, company_id=principal.company_id, card_id=cardId)
    return await _card(session, principal.company_id, cardId)


@router.post(
    f"{PREFIX}/cards/{{cardId:id}}/cancel",
    response_model=MorCardResponse,
    summary="Cancel a MOR card permanently",
    description="The cards domain's cancellation (`DELETE /api/v2/cards/{cardId}`): the "
    "balance returns to the merchant's wallet through an unload with the tier's unload fee, "
    "an unpaid decline fee is collected first, money held by a pending purchase keeps the "
    "card open (409 `CARD_BALANCE_NOT_ZERO`); card-provider cards only. The card keeps its "
    "last assignee; its pending load requests are cancelled.",
    responses=error_responses(400, 404, 409, 503),
)
async def mor_card_cancel(
    cardId: CardIdPath,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> MorCardResponse:
    await service.cancel(session, providers, company_id=principal.company_id, card_id=cardId)
    return await _card(session, principal.company_id, cardId)


@router.post(
    f"{PREFIX}/cards/{{cardId:id}}/fund",
    response_model=MorCardFundResponse,
    summary="Fund an assigned card from the merchant's wallet",
    description="The ordinary card top-up (`POST /api/v2/cards/topup`) from the company's "
    "master account: 5.00 through 250000.00 USD, the tier's top-up fee, 409 "
    "`INSUFFICIENT_FUNDS` when the wallet is short. An unassigned card is 409 "
    "`MOR_CARD_NOT_ASSIGNED`. Safe to retry with `Idempotency-Key` (a 503 leaves the money "
    "reserved: retry with the same key to finish).",
    responses=error_responses(400, 404, 409, 503),
)
async def mor_card_fund(
    cardId: CardIdPath,
    body: MorCardFundRequest,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> MorCardFundResponse:
    money = requested_amount(body.Amount, body.Currency.value, field="Amount")
    claim = await claim_request(request, session, principal, idempotency_key)
    funded = await service.fund(
        session,
        providers,
        claim=claim,
        company_id=principal.company_id,
        card_id=cardId,
        money=money,
    )
    row = funded.funding
    return MorCardFundResponse(
        CardId=row.card_id,
        FundingId=row.id,
        Amount=from_minor(row.amount_minor, row.currency),
        Fee=from_minor(row.fee_minor, row.currency),
        Currency=row.currency,
        Status=row.status,
        CreatedAt=row.created_at,
    )


@router.get(
    f"{PREFIX}/cards/{{cardId:id}}/transactions",
    response_model=CardTransactionsPage,
    summary="The current assignee's transactions with a card",
    description="The card's transactions (as `GET /api/v2/cards/{cardId}/transactions`) "
    "since its current assignment began, newest first; none while it is unassigned: an "
    "assignee never sees an earlier assignee's spending.",
    responses=error_responses(400, 404, 503),
)
async def mor_card_transactions(
    cardId: CardIdPath,
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
    card, found = await service.assignee_transactions(
        session, providers, company_id=principal.company_id, card_id=cardId
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


@router.get(
    f"{PREFIX}/cards/{{cardId:id}}/widget",
    response_model=WidgetResponse,
    summary="A secure widget URL showing a MOR card's full details",
    description="The card provider's page, as `GET /api/v2/cards/{cardId}/widget`: the only "
    "place the full number and CVV appear. Single use, valid for 60 seconds.",
    responses=error_responses(400, 404, 409, 503),
)
async def mor_card_widget(
    cardId: CardIdPath,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> WidgetResponse:
    settings: Settings = request.app.state.settings
    base_url = settings.public_base_url or str(request.base_url)
    found = await service.widget(
        session, providers, company_id=principal.company_id, card_id=cardId, base_url=base_url
    )
    return WidgetResponse(Url=found.url, ExpiresAt=found.expires_at)


# ------------------------------------------------------------------------- load requests


@router.post(
    f"{PREFIX}/load-requests",
    response_model=MorLoadRequestResponse,
    status_code=status.HTTP_201_CREATED,
    summary="A user asks for a load onto their assigned card",
    description="`PENDING` until the merchant approves or declines it (event "
    "`mor.load_request.pending`). The card must be assigned to `UserId` (409 "
    "`MOR_CARD_NOT_ASSIGNED_TO_USER`) and not cancelled (409 `CARD_CANCELLED`); `Amount` as a "
    "card top-up's, 5.00 through 250000.00 USD. Safe to retry with `Idempotency-Key`.",
    responses=error_responses(400, 404, 409),
)
async def mor_load_request_create(
    body: MorLoadRequestCreate,
    request: Request,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> MorLoadRequestResponse:
    money = requested_amount(body.Amount, body.Currency.value, field="Amount")
    await claim_request(request, session, principal, idempotency_key)
    row = await load_requests.create(
        session,
        company_id=principal.company_id,
        user_id=body.UserId,
        card_id=body.CardId,
        money=money,
        note=body.Note,
    )
    return MorLoadRequestResponse.of(row)


@router.get(
    f"{PREFIX}/load-requests",
    response_model=MorLoadRequestsPage,
    summary="The merchant's load requests",
    description="Newest first; `status`, `userId` and `cardId` narrow the list (an unknown "
    "`userId` is 404 `USER_NOT_FOUND`).",
    responses=error_responses(400, 404),
)
async def mor_load_requests(
    session: DbSession,
    principal: CurrentPrincipal,
    page: PageParams,
    status_: Annotated[MorLoadRequestStatus | None, Query(alias="status")] = None,
    userId: IdQuery = None,
    cardId: IdQuery = None,
) -> MorLoadRequestsPage:
    found = await load_requests.page(
        session,
        company_id=principal.company_id,
        status=status_.value if status_ is not None else None,
        user_id=userId,
        card_id=cardId,
        request=page,
    )
    return MorLoadRequestsPage(
        Items=[MorLoadRequestResponse.of(r) for r in found.rows],
        Page=page.page,
        PageSize=page.page_size,
        HasMore=found.has_more,
    )


@router.get(
    f"{PREFIX}/load-requests/{{loadRequestId:id}}",
    response_model=MorLoadRequestResponse,
    summary="A load request",
    responses=error_responses(400, 404),
)
async def mor_load_request(
    loadRequestId: LoadRequestIdPath, session: DbSession, principal: CurrentPrincipal
) -> MorLoadRequestResponse:
    row = await load_requests.get(
        session, company_id=principal.company_id, request_id=loadRequestId
    )
    return MorLoadRequestResponse.of(row)


@router.post(
    f"{PREFIX}/load-requests/{{loadRequestId:id}}/approve",
    response_model=MorLoadRequestResponse,
    summary="Approve a load request: the card is funded from the merchant's wallet once",
    description="`APPROVED`, then `FUNDED` once the ordinary top-up (with its fee) loaded "
    "the card, keyed by the request: approvals in parallel or repeated fund it once "
    "(approving a funded request answers it unchanged). A refused top-up (the wallet short: "
    "`FailureCode` `INSUFFICIENT_FUNDS`) ends it `FAILED`; a card no longer assigned to the "
    "requester ends it `CANCELLED`. A declined, failed or cancelled request is 409 "
    "`MOR_LOAD_REQUEST_NOT_PENDING`. A provider timeout is 503: approve again to finish. "
    "Events `mor.load_request.approved`, `.funded`, `.failed`, `.cancelled`.",
    responses=error_responses(400, 404, 409, 503),
)
async def mor_load_request_approve(
    loadRequestId: LoadRequestIdPath,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> MorLoadRequestResponse:
    row = await load_requests.approve(
        session, providers, company_id=principal.company_id, request_id=loadRequestId
    )
    return MorLoadRequestResponse.of(row)


@router.post(
    f"{PREFIX}/load-requests/{{loadRequestId:id}}/decline",
    response_model=MorLoadRequestResponse,
    summary="Decline a load request",
    description="A pending request ends `DECLINED` (event `mor.load_request.declined`); "
    "declining it again answers it unchanged; a decided one is 409 "
    "`MOR_LOAD_REQUEST_NOT_PENDING`.",
    responses=error_responses(400, 404, 409),
)
async def mor_load_request_decline(
    loadRequestId: LoadRequestIdPath,
    session: DbSession,
    principal: CurrentPrincipal,
    body: MorLoadRequestDecline | None = None,
) -> MorLoadRequestResponse:
    row = await load_requests.decline(
        session,
        company_id=principal.company_id,
        request_id=loadRequestId,
        reason=body.Reason if body is not None else None,
    )
    return MorLoadRequestResponse.of(row)
