"""Fiat to the card provider: `bankprov-to-cardprov`, its quote and its funds decision, all
under `/api/v2/crypto-virtual-accounts` with `userId`."""

from __future__ import annotations

from fastapi import Request, status

from finplat.config import Settings
from finplat.crypto.cardprov import service
from finplat.crypto.cardprov.schemas import (
    CardProviderQuoteRequest,
    CardProviderQuoteResponse,
    FundsDecision,
    FundsDecisionRequest,
    FundsDecisionResponse,
    QuoteIdRequest,
)
from finplat.crypto.exchange.schemas import CryptoTransferResponse
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.money import requested_amount
from finplat.kit.schemas import UserIdQuery

router = api_router(tags=["Crypto"])
PREFIX = "/api/v2/crypto-virtual-accounts/bankprov-to-cardprov"

APPROVE_DESCRIPTION = (
    "The quote's `FiatAmount` leaves the budget (reserved while the rail buys USDC) and "
    "`DeliveredAmount` USDC goes to the card's deposit address at the card provider. Answers "
    "the `BANKPROV_TO_CARDPROV` transfer, `PENDING` until the rail reports the outcome "
    "(`COMPLETED`, or `FAILED` with the fiat released; an unknown outcome stays `PENDING` "
    "for reconciliation); follow it at `GET /api/v2/crypto-virtual-accounts/transfers/"
    "{transferId}`. 409 `QUOTE_EXPIRED`, `QUOTE_ALREADY_ACCEPTED` (parallel approvals: one "
    "wins), `QUOTE_DECLINED` or `INSUFFICIENT_FUNDS`; 404 `QUOTE_NOT_FOUND`. Safe to retry "
    "with `Idempotency-Key`."
)


@router.post(
    f"{PREFIX}/quote",
    response_model=CardProviderQuoteResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Quote a banking-provider to card-provider transfer",
    description="Prices `Amount` of `FiatCurrency` from `BudgetId` (a budget of the user's "
    "open banking account holding that currency: else 404 `BUDGET_NOT_FOUND`, 409 "
    "`BANKING_ACCOUNT_NOT_ACTIVE` or `CURRENCY_NOT_IN_BUDGET`) in USDC delivered to the "
    "deposit address of `CardId` at the card provider (the user's card-provider card: 404 "
    "`CARD_NOT_FOUND`, 409 `DEPOSIT_NOT_SUPPORTED` or `CARD_CANCELLED`). The quote holds "
    "until `ExpiresAt` (30 seconds) and is decided once. USDC of at least "
    "`FINPLAT_CRYPTO_EDD_THRESHOLD` needs the user's EDD (409 `EDD_REQUIRED`).",
    responses=error_responses(400, 404, 409, 503),
)
async def crypto_bankprov_to_cardprov_quote(
    userId: UserIdQuery,
    body: CardProviderQuoteRequest,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CardProviderQuoteResponse:
    settings: Settings = request.app.state.settings
    quote = await service.quote(
        session,
        providers,
        company_id=principal.company_id,
        user_id=userId,
        fiat=requested_amount(body.Amount, body.FiatCurrency),
        budget_id=body.BudgetId,
        card_id=body.CardId,
        edd_threshold=settings.crypto_edd_threshold,
    )
    return CardProviderQuoteResponse.of(quote)


@router.post(
    f"{PREFIX}/funds-decision",
    response_model=FundsDecisionResponse,
    summary="Decide a banking-provider to card-provider quote",
    description="`APPROVE`: " + APPROVE_DESCRIPTION + " `DECLINE`: the quote is closed "
    "(`DECLINED`) and nothing moves; a decided or expired quote is 409.",
    responses=error_responses(400, 404, 409, 503),
)
async def crypto_bankprov_to_cardprov_funds_decision(
    userId: UserIdQuery,
    body: FundsDecisionRequest,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> FundsDecisionResponse:
    company_id = principal.company_id
    quote = await service.quote_of(
        session, company_id=company_id, user_id=userId, quote_id=body.QuoteId
    )
    claim = await claim_request(request, session, principal, idempotency_key)
    transfer = None
    if body.Decision is FundsDecision.APPROVE:
        transfer = CryptoTransferResponse.of(
            await service.approve(
                session, providers, claim=claim, company_id=company_id, quote=quote
            )
        )
    else:
        await service.decline(session, company_id=company_id, quote=quote)
    decided = await service.quote_of(
        session, company_id=company_id, user_id=userId, quote_id=body.QuoteId
    )
    return FundsDecisionResponse(
        QuoteId=decided.id,
        Decision=body.Decision,
        Quote=CardProviderQuoteResponse.of(decided),
        Transfer=transfer,
    )


@router.post(
    PREFIX,
    response_model=CryptoTransferResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Transfer from a banking-provider budget to the card provider",
    description="Approves the quote `QuoteId` (the same operation as `funds-decision` with "
    "`APPROVE`): " + APPROVE_DESCRIPTION,
    responses=error_responses(400, 404, 409, 503),
)
async def crypto_bankprov_to_cardprov(
    userId: UserIdQuery,
    body: QuoteIdRequest,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> CryptoTransferResponse:
    quote = await service.quote_of(
        session, company_id=principal.company_id, user_id=userId, quote_id=body.QuoteId
    )
    claim = await claim_request(request, session, principal, idempotency_key)
    transfer = await service.approve(
        session, providers, claim=claim, company_id=principal.company_id, quote=quote
    )
    return CryptoTransferResponse.of(transfer)
