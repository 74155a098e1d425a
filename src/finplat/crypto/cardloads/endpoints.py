"""Crypto card loads: `POST /api/v2/card-loads/crypto` and its status, with `userId`."""

from __future__ import annotations

from fastapi import Request, status

from finplat.cards import lookup
from finplat.crypto.cardloads import service
from finplat.crypto.cardloads.schemas import (
    CryptoCardLoadRequest,
    CryptoCardLoadResponse,
    LoadIdPath,
)
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.money import requested_amount
from finplat.kit.schemas import UserIdQuery

router = api_router(tags=["Crypto"])


@router.post(
    "/api/v2/card-loads/crypto",
    response_model=CryptoCardLoadResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Load a card with crypto",
    description="Loads `Amount` USD (5.00 through 250000.00) onto the user's card, paid 1:1 "
    "in `crypto_currency` (`USDC` or `USDT`) from the user's crypto balance and sent on "
    "`chain_id` (1 Ethereum, -200 Tron, 137 Polygon, 42161 Arbitrum) to the card provider; "
    "anything else is 400. Requires `Idempotency-Key` (400 `IDEMPOTENCY_KEY_REQUIRED` "
    "without): a retry answers the first load and never loads twice. The coins are reserved "
    "(`PENDING`) until the transfer is final on chain (`CONFIRMED`); the card is then "
    "credited once by an ordinary top-up, with its fee (`COMPLETED`, `OrderId`). A failed "
    "transfer or a card that refuses the credit is `FAILED` with the coins back in the "
    "crypto balance. 404 `CARD_NOT_FOUND`; 409 `INSUFFICIENT_FUNDS`, `CARD_CANCELLED` or "
    "`CARD_CURRENCY_MISMATCH`.",
    responses=error_responses(400, 404, 409, 503),
)
async def crypto_card_load(
    userId: UserIdQuery,
    body: CryptoCardLoadRequest,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> CryptoCardLoadResponse:
    # Whose card first: an unknown user or card is 404 whatever the headers.
    await lookup.find_card(
        session, company_id=principal.company_id, card_id=body.CardId, user_id=userId
    )
    claim = await claim_request(request, session, principal, idempotency_key, required=True)
    load = await service.create(
        session,
        providers,
        claim=claim,
        company_id=principal.company_id,
        user_id=userId,
        card_id=body.CardId,
        load=requested_amount(body.Amount, service.CARD_CURRENCY),
        currency=body.crypto_currency,
        chain_id=body.chain_id,
    )
    return CryptoCardLoadResponse.of(load)


@router.get(
    "/api/v2/card-loads/crypto/{loadId}",
    response_model=CryptoCardLoadResponse,
    summary="Get a crypto card load's status",
    description="A pending load is refreshed from the rail first; if the rail cannot answer, "
    "the stored state is returned. Another user's load is 404 `CARD_LOAD_NOT_FOUND`.",
    responses=error_responses(400, 404),
)
async def crypto_card_load_status(
    loadId: LoadIdPath,
    userId: UserIdQuery,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CryptoCardLoadResponse:
    load = await service.load_of(
        session, providers, company_id=principal.company_id, user_id=userId, load_id=loadId
    )
    return CryptoCardLoadResponse.of(load)
