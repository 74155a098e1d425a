"""Sandbox only: the card providers' pending callbacks, delivered now."""

from __future__ import annotations

from fastapi import Request, Response, status

from finplat.cards import service
from finplat.cards.schemas import CardIdPath
from finplat.config import Settings
from finplat.errors import error_responses
from finplat.kit.schemas import UserIdQuery
from finplat.providers import sandbox_delivery
from finplat.routing import CurrentPrincipal, DbSession, api_router

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
    await service.user_card(
        session, company_id=principal.company_id, user_id=userId, card_id=cardId
    )
    await session.commit()
    settings: Settings = request.app.state.settings
    await sandbox_delivery.deliver_due(
        request.app.state.session_factory,
        secret=settings.provider_callback_secret,
        company_id=principal.company_id,
    )
    return Response(status_code=status.HTTP_204_NO_CONTENT)
