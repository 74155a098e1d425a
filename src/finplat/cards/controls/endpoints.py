"""A card's controls: freeze, enable, activate, PIN and auto-lock."""

from __future__ import annotations

from finplat.cards import lookup, service
from finplat.cards.controls import service as controls
from finplat.cards.controls.schemas import (
    AutoLockBody,
    CardAutoLockResponseV2,
    PinBody,
    PinResponse,
)
from finplat.cards.models import Card
from finplat.cards.schemas import CardIdPath, CardResponse
from finplat.cards.status import CardStatus
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.kit.schemas import UserIdQuery

router = api_router(tags=["Cards"])


async def _response(session: DbSession, card: Card) -> CardResponse:
    view = (await service.views(session, [card]))[0]
    return CardResponse.of(view.card, available=view.available, posted=view.posted)


CONTROL_ERRORS = error_responses(400, 404, 409, 503)


# The controls whose answers racing controls can overtake (`CardControlSuperseded`).
STATE_CONTROL_ERRORS = {
    **CONTROL_ERRORS,
    409: {
        **CONTROL_ERRORS[409],
        "description": "Conflict with the card's state. `CARD_CONTROL_SUPERSEDED`: the provider "
        "applied this change, but a later change to the card (a control sent meanwhile) "
        "decided its state before this answer came back, and the card is not as asked; "
        "`Details` gives its `status` and `autoLockEnabled` now. Send the control again if "
        "it is still wanted.",
    },
}


SUPERSEDED_DOC = (
    " 409 `CARD_CONTROL_SUPERSEDED` when a later change to the card overtook this one and "
    "left the card otherwise."
)


async def _card(
    session: DbSession, principal: CurrentPrincipal, user_id: int, card_id: int
) -> Card:
    return await lookup.user_card(
        session, company_id=principal.company_id, user_id=user_id, card_id=card_id
    )


@router.post(
    "/api/v2/cards/{cardId:id}/freeze",
    response_model=CardResponse,
    summary="Freeze a card (temporary stop)",
    description="All providers. An active card becomes `FROZEN` (a frozen one stays so); "
    "409 `CARD_CANCELLED` or `CARD_STATE_CONFLICT` otherwise." + SUPERSEDED_DOC,
    responses=STATE_CONTROL_ERRORS,
)
async def cards_freeze(
    cardId: CardIdPath,
    userId: UserIdQuery,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CardResponse:
    card = await _card(session, principal, userId, cardId)
    return await _response(session, await controls.freeze(session, providers, card))


@router.post(
    "/api/v2/cards/{cardId:id}/enable",
    response_model=CardResponse,
    summary="Re-enable a card",
    description="A frozen card becomes `ACTIVE`; an auto-locked card is unlocked. A "
    "system-blocked card is rejected with 409 "
    "`CARD_SYSTEM_BLOCKED` while its decline fee is unpaid." + SUPERSEDED_DOC,
    responses=STATE_CONTROL_ERRORS,
)
async def cards_enable(
    cardId: CardIdPath,
    userId: UserIdQuery,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CardResponse:
    card = await _card(session, principal, userId, cardId)
    return await _response(session, await controls.enable(session, providers, card))


@router.post(
    "/api/v2/cards/{cardId:id}/activate",
    response_model=CardResponse,
    summary="Activate a physical card after delivery",
    description="A physical card in `INACTIVE` becomes `ACTIVE`; 409 for virtual cards and "
    "other statuses." + SUPERSEDED_DOC,
    responses=STATE_CONTROL_ERRORS,
)
async def cards_activate(
    cardId: CardIdPath,
    userId: UserIdQuery,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CardResponse:
    card = await _card(session, principal, userId, cardId)
    return await _response(session, await controls.activate(session, providers, card))


@router.post(
    "/api/v2/cards/{cardId:id}/pin",
    response_model=PinResponse,
    summary="Set the card's PIN",
    description="Six digits; 409 `CARD_PIN_TOO_SIMPLE` for six equal digits or a run of "
    "consecutive digits (123456, 654321, ...). The PIN goes to the provider only: it is "
    "never echoed, logged or stored by the platform.",
    responses=CONTROL_ERRORS,
)
async def cards_set_pin(
    cardId: CardIdPath,
    userId: UserIdQuery,
    body: PinBody,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> PinResponse:
    card = await _card(session, principal, userId, cardId)
    card = await controls.set_pin(session, providers, card, body.Pin)
    return PinResponse(CardId=card.id, PinSet=card.pin_set)


AUTO_LOCK_DOC = (
    "With auto-lock on, the card locks itself after each approved purchase: the next "
    "purchases are declined with `AUTO_LOCKED` until the holder unlocks the card with "
    "`POST /api/v2/cards/{cardId}/enable`. Turning auto-lock off also unlocks it. 409 "
    "`CARD_CANCELLED` for a cancelled card." + SUPERSEDED_DOC
)


def _auto_lock(card: Card) -> CardAutoLockResponseV2:
    return CardAutoLockResponseV2(
        CardId=card.id,
        AutoLockEnabled=card.auto_lock_enabled,
        Status=CardStatus(card.status),
        UpdatedAt=card.updated_at,
    )


@router.put(
    "/api/v2/cards/{cardId:id}/auto-lock",
    response_model=CardAutoLockResponseV2,
    summary="Turn auto-lock on or off",
    description=AUTO_LOCK_DOC,
    responses=STATE_CONTROL_ERRORS,
)
async def cards_put_auto_lock(
    cardId: CardIdPath,
    userId: UserIdQuery,
    body: AutoLockBody,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CardAutoLockResponseV2:
    card = await _card(session, principal, userId, cardId)
    return _auto_lock(await controls.set_auto_lock(session, providers, card, body.enabled))


@router.post(
    "/api/v2/cards/{cardId:id}/auto-lock/enable",
    response_model=CardAutoLockResponseV2,
    summary="Turn auto-lock on",
    description=AUTO_LOCK_DOC,
    responses=STATE_CONTROL_ERRORS,
)
async def cards_enable_auto_lock(
    cardId: CardIdPath,
    userId: UserIdQuery,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CardAutoLockResponseV2:
    card = await _card(session, principal, userId, cardId)
    return _auto_lock(await controls.set_auto_lock(session, providers, card, True))


@router.post(
    "/api/v2/cards/{cardId:id}/auto-lock/disable",
    response_model=CardAutoLockResponseV2,
    summary="Turn auto-lock off",
    description=AUTO_LOCK_DOC,
    responses=STATE_CONTROL_ERRORS,
)
async def cards_disable_auto_lock(
    cardId: CardIdPath,
    userId: UserIdQuery,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CardAutoLockResponseV2:
    card = await _card(session, principal, userId, cardId)
    return _auto_lock(await controls.set_auto_lock(session, providers, card, False))
