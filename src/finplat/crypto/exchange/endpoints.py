"""Crypto to fiat: `exchange/quote`, `exchange/accept` and `bankprov-deposits` (and its
status), all under `/api/v2/crypto-virtual-accounts` with `userId`."""

from __future__ import annotations

from fastapi import Request, status

from finplat.config import Settings
from finplat.crypto.exchange import service
from finplat.crypto.exchange.schemas import (
    AcceptRequest,
    CryptoTransferResponse,
    ExchangeQuoteRequest,
    ExchangeQuoteResponse,
    TransferIdPath,
)
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.money import requested_amount
from finplat.kit.schemas import UserIdQuery

router = api_router(tags=["Crypto"])

ACCEPT_DESCRIPTION = (
    "Accepts an open exchange quote of the user, once: the quote's `Amount` leaves the "
    "user's crypto balance (reserved while the rail converts) and the rail sells it, paying "
    "`FiatAmount` into the quote's budget. Answers the `BANKPROV_DEPOSIT` transfer, `PENDING` "
    "until the rail reports the outcome (`COMPLETED`, or `FAILED` with the amount released); "
    "follow it at `GET /api/v2/crypto-virtual-accounts/bankprov-deposits/{transferId}`. 409 "
    "`QUOTE_EXPIRED`, `QUOTE_ALREADY_ACCEPTED` (parallel accepts: one wins) or "
    "`INSUFFICIENT_FUNDS`; 404 `QUOTE_NOT_FOUND`. Safe to retry with `Idempotency-Key`."
)


@router.post(
    "/api/v2/crypto-virtual-accounts/exchange/quote",
    response_model=ExchangeQuoteResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Quote a crypto-to-fiat exchange",
    description="Prices selling `Amount` of the user's USDC or USDT for `FiatCurrency`, paid "
    "into `BudgetId` (a budget of the user's open banking account that holds that currency: "
    "else 404 `BUDGET_NOT_FOUND`, 409 `BANKING_ACCOUNT_NOT_ACTIVE` or "
    "`CURRENCY_NOT_IN_BUDGET`). The quote holds its rate until `ExpiresAt` (30 seconds) and "
    "is accepted at most once. An amount of at least `FINPLAT_CRYPTO_EDD_THRESHOLD` (10000 "
    "by default) needs the user's enhanced due diligence first (409 `EDD_REQUIRED`).",
    responses=error_responses(400, 404, 409, 503),
)
async def crypto_exchange_quote(
    userId: UserIdQuery,
    body: ExchangeQuoteRequest,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> ExchangeQuoteResponse:
    settings: Settings = request.app.state.settings
    quote = await service.quote(
        session,
        providers,
        company_id=principal.company_id,
        user_id=userId,
        money=requested_amount(body.Amount, body.CryptoCurrency),
        fiat_currency=body.FiatCurrency,
        budget_id=body.BudgetId,
        edd_threshold=settings.crypto_edd_threshold,
    )
    return ExchangeQuoteResponse.of(quote)


async def _accept(
    user_id: int,
    body: AcceptRequest,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: str | None,
) -> CryptoTransferResponse:
    quote = await service.quote_of(
        session, company_id=principal.company_id, user_id=user_id, quote_id=body.QuoteId
    )
    claim = await claim_request(request, session, principal, idempotency_key)
    transfer = await service.accept(
        session, providers, claim=claim, company_id=principal.company_id, quote=quote
    )
    return CryptoTransferResponse.of(transfer)


@router.post(
    "/api/v2/crypto-virtual-accounts/exchange/accept",
    response_model=CryptoTransferResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Accept a crypto-to-fiat exchange quote",
    description=ACCEPT_DESCRIPTION,
    responses=error_responses(400, 404, 409, 503),
)
async def crypto_exchange_accept(
    userId: UserIdQuery,
    body: AcceptRequest,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> CryptoTransferResponse:
    return await _accept(userId, body, request, providers, session, principal, idempotency_key)


@router.post(
    "/api/v2/crypto-virtual-accounts/bankprov-deposits",
    response_model=CryptoTransferResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Deposit crypto into a banking-provider budget (crypto to fiat)",
    description="The same operation as `exchange/accept`: " + ACCEPT_DESCRIPTION,
    responses=error_responses(400, 404, 409, 503),
)
async def crypto_bankprov_deposit(
    userId: UserIdQuery,
    body: AcceptRequest,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> CryptoTransferResponse:
    return await _accept(userId, body, request, providers, session, principal, idempotency_key)


@router.get(
    "/api/v2/crypto-virtual-accounts/bankprov-deposits/{transferId}",
    response_model=CryptoTransferResponse,
    summary="Get a crypto-to-fiat deposit's status",
    description="A pending transfer is refreshed from the rail first; if the rail cannot "
    "answer, the stored state is returned.",
    responses=error_responses(400, 404),
)
async def crypto_bankprov_deposit_status(
    transferId: TransferIdPath,
    userId: UserIdQuery,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CryptoTransferResponse:
    transfer = await service.transfer_of(
        session,
        providers,
        company_id=principal.company_id,
        user_id=userId,
        transfer_id=transferId,
    )
    return CryptoTransferResponse.of(transfer)
