"""Sandbox moves of the transfers toward the card provider: a `bankprov-to-cardprov`
delivery decided, a crypto card load confirmed on chain or failed."""

from __future__ import annotations

from typing import Literal

from fastapi import Request

from finplat.config import Settings
from finplat.crypto.cardloads.schemas import CryptoCardLoadResponse, LoadIdPath
from finplat.crypto.exchange.schemas import CryptoTransferResponse, TransferIdPath
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.kit.schemas import RequestModel, UserIdQuery
from finplat.sandbox.crypto import card_transfers

router = api_router(tags=["Sandbox"])


class DeliveryOutcome(RequestModel):
    Outcome: Literal["COMPLETED", "FAILED"]


class CardLoadChainOutcome(RequestModel):
    Outcome: Literal["CONFIRMED", "FAILED"]


def _secret(request: Request) -> str:
    settings: Settings = request.app.state.settings
    return settings.provider_callback_secret


@router.post(
    "/api/v2/sandbox/crypto/bankprov-to-cardprov/{transferId}/settle",
    response_model=CryptoTransferResponse,
    summary="Decide a banking-provider to card-provider delivery (sandbox)",
    description="`COMPLETED`: the rail collects `FiatAmount` from the budget (at the banking "
    "provider) and the USDC reaches the card's deposit address at the card provider (its "
    "deposit, `card.deposit.received`, with the card's DEPOSIT auto top-up when on); the "
    "transfer is `COMPLETED`. `FAILED`: the transfer is `FAILED` and the fiat released. A "
    "settled transfer is 409 `TRANSFER_NOT_PENDING`.",
    responses=error_responses(400, 404, 409, 503),
)
async def crypto_sandbox_settle_cardprov_delivery(
    transferId: TransferIdPath,
    userId: UserIdQuery,
    body: DeliveryOutcome,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CryptoTransferResponse:
    transfer = await card_transfers.settle_delivery(
        session,
        providers,
        request.app.state.session_factory,
        secret=_secret(request),
        company_id=principal.company_id,
        user_id=userId,
        transfer_id=transferId,
        completed=body.Outcome == "COMPLETED",
    )
    return CryptoTransferResponse.of(transfer)


@router.post(
    "/api/v2/sandbox/crypto/cardprov-to-bankprov/{transferId}/settle",
    response_model=CryptoTransferResponse,
    summary="Decide a card-provider to banking-provider conversion (sandbox)",
    description="`COMPLETED`: the rail pays `FiatAmount` into the budget (the banking "
    "provider's incoming payment) and the transfer is `COMPLETED`. `FAILED`: the transfer is "
    "`FAILED`, the unload fee given back and the whole unloaded amount put back on the card "
    "at once. A settled transfer, or one whose unload has not been made yet, is 409 "
    "`TRANSFER_NOT_PENDING`.",
    responses=error_responses(400, 404, 409, 503),
)
async def crypto_sandbox_settle_card_to_bank(
    transferId: TransferIdPath,
    userId: UserIdQuery,
    body: DeliveryOutcome,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CryptoTransferResponse:
    transfer = await card_transfers.settle_card_to_bank(
        session,
        providers,
        request.app.state.session_factory,
        secret=_secret(request),
        company_id=principal.company_id,
        user_id=userId,
        transfer_id=transferId,
        completed=body.Outcome == "COMPLETED",
    )
    return CryptoTransferResponse.of(transfer)


@router.post(
    "/api/v2/sandbox/crypto/card-loads/{loadId}/confirm",
    response_model=CryptoCardLoadResponse,
    summary="Confirm or fail a crypto card load on chain (sandbox)",
    description="`CONFIRMED`: the load's chain transfer is final; the coins are settled and "
    "the card is credited at once by its top-up (`COMPLETED`, or `FAILED` with the coins "
    "back when the card refuses it). `FAILED`: the transfer failed on chain; the load is "
    "`FAILED` and the coins released. A settled load is 409 `CARD_LOAD_NOT_PENDING`.",
    responses=error_responses(400, 404, 409, 503),
)
async def crypto_sandbox_confirm_card_load(
    loadId: LoadIdPath,
    userId: UserIdQuery,
    body: CardLoadChainOutcome,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CryptoCardLoadResponse:
    load = await card_transfers.settle_load(
        session,
        providers,
        request.app.state.session_factory,
        secret=_secret(request),
        company_id=principal.company_id,
        user_id=userId,
        load_id=loadId,
        confirmed=body.Outcome == "CONFIRMED",
    )
    return CryptoCardLoadResponse.of(load)
