"""Card provider to banking provider: `cardprov-to-bankprov`, its quote and its funds
decision, all under `/api/v2/crypto-virtual-accounts` with `userId` (the shapes of
`bankprov-to-cardprov`)."""

from __future__ import annotations

from fastapi import Request, status

from finplat.config import Settings
from finplat.crypto.cardprov import service as cardprov
from finplat.crypto.cardprov.schemas import (
    CardProviderQuoteResponse,
    CardToBankQuoteRequest,
    FundsDecision,
    FundsDecisionRequest,
    FundsDecisionResponse,
    QuoteIdRequest,
)
from finplat.crypto.cardprov_to_bankprov import service
from finplat.crypto.exchange.schemas import CryptoTransferResponse
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.money import requested_amount
from finplat.kit.schemas import UserIdQuery

router = api_router(tags=["Crypto"])
PREFIX = "/api/v2/crypto-virtual-accounts/cardprov-to-bankprov"

APPROVE_DESCRIPTION = (
    "The quote's `CardAmount` is unloaded from the card at the card provider (the ordinary "
    "unload, its fee `CardFee`), the rest is paid out in USDC and sold by the rail; "
    "`FiatAmount` reaches the budget. Answers the `CARDPROV_TO_BANKPROV` transfer, `PENDING` "
    "until the rail reports the outcome: `COMPLETED`, or `FAILED` with the whole `CardAmount` "
    "back on the card and no fee kept (an unload the card provider refuses fails it with "
    "nothing moved; an unknown outcome stays `PENDING` for reconciliation); follow it at "
    "`GET /api/v2/crypto-virtual-accounts/transfers/{transferId}`. 409 `QUOTE_EXPIRED`, "
    "`QUOTE_ALREADY_ACCEPTED` (parallel approvals: one wins), `QUOTE_DECLINED`, "
    "`CARD_CANCELLED` or `INSUFFICIENT_CARD_BALANCE` (the quote stays open); 404 "
    "`QUOTE_NOT_FOUND`. Safe to retry with `Idempotency-Key`."
)


@router.post(
    f"{PREFIX}/quote",
    response_model=CardProviderQuoteResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Quote a card-provider to banking-provider transfer",
    description="Prices `Amount` USD of the card `CardId` (the user's card-provider card in "
    "USD: else 404 `CARD_NOT_FOUND`, 409 `DEPOSIT_NOT_SUPPORTED`, `CARD_CANCELLED` or "
    "`CARD_CURRENCY_MISMATCH`) in `FiatCurrency` paid into `BudgetId` (a budget of the "
    "user's open banking account holding that currency: else 404 `BUDGET_NOT_FOUND`, 409 "
    "`BANKING_ACCOUNT_NOT_ACTIVE` or `CURRENCY_NOT_IN_BUDGET`): the card's unload fee, the "
    "rest 1:1 in USDC, the 0.5 % fee, the rest sold at the rail's rate. The quote holds "
    "until `ExpiresAt` (30 seconds) and is decided once. USDC of at least "
    "`FINPLAT_CRYPTO_EDD_THRESHOLD` needs the user's EDD (409 `EDD_REQUIRED`); nothing left "
    "to pay is 409 `AMOUNT_TOO_SMALL`.",
    responses=error_responses(400, 404, 409, 503),
)
async def crypto_cardprov_to_bankprov_quote(
    userId: UserIdQuery,
    body: CardToBankQuoteRequest,
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
        card_money=requested_amount(body.Amount, service.CARD_CURRENCY),
        card_id=body.CardId,
        budget_id=body.BudgetId,
        fiat_currency=body.FiatCurrency,
        edd_threshold=settings.crypto_edd_threshold,
    )
    return CardProviderQuoteResponse.of(quote)


@router.post(
    f"{PREFIX}/funds-decision",
    response_model=FundsDecisionResponse,
    summary="Decide a card-provider to banking-provider quote",
    description="`APPROVE`: " + APPROVE_DESCRIPTION + " `DECLINE`: the quote is closed "
    "(`DECLINED`) and nothing moves; a decided or expired quote is 409.",
    responses=error_responses(400, 404, 409, 503),
)
async def crypto_cardprov_to_bankprov_funds_decision(
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
        await cardprov.decline(session, company_id=company_id, quote=quote)
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
    summary="Transfer from the card provider to a banking-provider budget",
    description="Approves the quote `QuoteId` (the same operation as `funds-decision` with "
    "`APPROVE`): " + APPROVE_DESCRIPTION,
    responses=error_responses(400, 404, 409, 503),
)
async def crypto_cardprov_to_bankprov(
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
