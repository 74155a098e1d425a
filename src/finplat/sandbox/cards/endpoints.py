"""Sandbox only: the card providers' pending callbacks, delivered now, and a card the provider
cancels on its own."""

from __future__ import annotations

from fastapi import Request, Response, status

from finplat.cards import lookup, programs
from finplat.cards.schemas import CardIdPath
from finplat.config import Settings
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.kit.schemas import UserIdQuery
from finplat.providers.calls import commit_then_call
from finplat.providers.sandbox import delivery as sandbox_delivery

router = api_router(tags=["Sandbox"])


@router.post(
    "/api/v2/sandbox/cards/{cardId}/callbacks",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    summary="Deliver the card provider's pending callbacks now (sandbox)",
    description="The background job delivers them otherwise. For example the provider's "
    "report that it produced the card (`PENDING` → `ACTIVE` for virtual cards, `INACTIVE` "
    "for physical ones).",
    responses=error_responses(400, 404),
)
async def sandbox_cards_deliver_callbacks(
    cardId: CardIdPath,
    userId: UserIdQuery,
    request: Request,
    session: DbSession,
    principal: CurrentPrincipal,
) -> Response:
    await lookup.user_card(session, company_id=principal.company_id, user_id=userId, card_id=cardId)
    await session.commit()
    settings: Settings = request.app.state.settings
    await sandbox_delivery.deliver_due(
        request.app.state.session_factory,
        secret=settings.provider_callback_secret,
        company_id=principal.company_id,
    )
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    "/api/v2/sandbox/cards/{cardId}/provider-cancellation",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    summary="Have the card provider cancel a card on its own (sandbox)",
    description="As a real provider may (suspected fraud, a closed programme): the provider "
    "cancels the card, returns what it held to the programme and reports `CANCELLED`, "
    "delivered at once. The card becomes `CANCELLED`, its available balance is booked back "
    "(an unpaid decline fee first, the rest to the master account, no unload fee), the fee it "
    "cannot pay is written off, and `card.deleted` is sent with `cancelledBy` `PROVIDER`. "
    "409 for a card already cancelled or not issued yet.",
    responses=error_responses(400, 404, 409, 503),
)
async def sandbox_cards_provider_cancellation(
    cardId: CardIdPath,
    userId: UserIdQuery,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> Response:
    company_id = principal.company_id
    card = await lookup.user_card(session, company_id=company_id, user_id=userId, card_id=cardId)
    card.refuse_if_cancelled()
    simulation = programs.simulation_of(providers, card, what="its own cancellation")
    ref = programs.provider_card_id(card)
    await commit_then_call(
        session,
        providers.policy,
        provider=card.provider,
        operation="cancel_on_its_own",
        call=lambda: simulation.cancel_on_its_own(company_id=company_id, card_id=ref),
        idempotent=False,
    )
    settings: Settings = request.app.state.settings
    await sandbox_delivery.deliver_due(
        request.app.state.session_factory,
        secret=settings.provider_callback_secret,
        company_id=company_id,
    )
    return Response(status_code=status.HTTP_204_NO_CONTENT)
