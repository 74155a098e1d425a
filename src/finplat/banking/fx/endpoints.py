"""Quotes and FX trades: `/banking/quotations`, `/banking/orders/quote`,
`/banking/orders/trade` and `/banking/trades/execute`."""

from __future__ import annotations

from fastapi import Request, status

from finplat.banking.discovery import NO_BANKING
from finplat.banking.fx import service
from finplat.banking.fx.schemas import (
    OrderTradeRequest,
    QuoteRequest,
    QuoteResponse,
    TradeRequest,
    TradeResponse,
)
from finplat.banking.schemas import OptionalUserIdQuery
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.schemas import UserIdQuery
from finplat.providers.banking.port import FixedSide
from finplat.providers.registry import Providers, configured

router = api_router(tags=["Banking"])

QUOTE_DESCRIPTION = (
    "Prices a conversion between two currencies of a budget (`BudgetId`, or the account's "
    "default budget). The quote is valid until `ExpiresAt` and can be executed once. When the "
    "banking provider cannot quote for a moment, the answer is still 200, with `IsAvailable` "
    "false, `UnavailableReason` `QUOTE_TEMPORARILY_UNAVAILABLE` and `RetryAfterSeconds`: ask "
    "again after that delay."
)
TRADE_DESCRIPTION = (
    "Executes a quote once: the sell amount leaves the budget and the buy amount arrives. "
    "`Status` is `COMPLETED` once the provider confirms; if its answer is pending or lost, "
    "`Status` is `PENDING`, the sell amount stays reserved and the `FX_TRADE` transaction "
    "(`TransactionId`) is settled when the provider's outcome is known. Without `QuoteId`: "
    "400 `QUOTE_ID_REQUIRED`. 409 `QUOTE_EXPIRED`, `QUOTE_ALREADY_EXECUTED` or "
    "`INSUFFICIENT_FUNDS`; 404 `QUOTE_NOT_FOUND` when the quote is not the account's. Safe to "
    "retry with `Idempotency-Key`: the same key answers the first result."
)


async def _quote(
    body: QuoteRequest,
    user_id: int | None,
    providers: Providers,
    session: DbSession,
    principal: CurrentPrincipal,
) -> QuoteResponse:
    fixed_side = FixedSide(body.FixedSide)
    sell, buy = str(body.SellCurrency), str(body.BuyCurrency)
    outcome = await service.request_quote(
        session,
        providers,
        company_id=principal.company_id,
        user_id=user_id,
        account_id=body.AccountId,
        budget_id=body.BudgetId,
        sell_currency=sell,
        buy_currency=buy,
        amount=body.Amount,
        fixed_side=fixed_side,
    )
    if outcome.quote is None:
        return QuoteResponse.unavailable(
            account_id=outcome.account_id,
            budget_id=outcome.budget_id,
            sell_currency=sell,
            buy_currency=buy,
            fixed_side=fixed_side,
            retry_after=service.RETRY_AFTER_SECONDS,
        )
    return QuoteResponse.of(outcome.quote)


@router.post(
    "/api/v2/banking/quotations",
    response_model=QuoteResponse,
    summary="Quote a currency conversion for a user",
    description=QUOTE_DESCRIPTION + " The user is the holder of `AccountId` (a banking "
    "account of the company's users); with `userId`, the account must be that user's (404 "
    "`ACCOUNT_NOT_FOUND` otherwise, as for an account that does not exist).",
    responses=error_responses(400, 404, 409, 503),
)
async def fx_create_quotation(
    body: QuoteRequest,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    userId: OptionalUserIdQuery = None,
) -> QuoteResponse:
    return await _quote(body, userId, providers, session, principal)


@router.post(
    "/api/v2/banking/orders/quote",
    response_model=QuoteResponse,
    summary="Quote a currency conversion (order)",
    description=QUOTE_DESCRIPTION + " With `userId`, `AccountId` must be that user's; "
    "without it, a banking account of one of the company's users.",
    responses=error_responses(400, 404, 409, 503),
)
async def fx_order_quote(
    body: QuoteRequest,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    userId: OptionalUserIdQuery = None,
) -> QuoteResponse:
    return await _quote(body, userId, providers, session, principal)


async def _trade(
    *,
    user_id: int | None,
    account_id: str | None,
    quote_id: str | None,
    request: Request,
    providers: Providers,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: str | None,
) -> TradeResponse:
    quote = await service.quote_for_trade(
        session,
        company_id=principal.company_id,
        user_id=user_id,
        account_id=account_id,
        quote_id=quote_id,
    )
    configured(providers.banking, NO_BANKING)
    claim = await claim_request(request, session, principal, idempotency_key)
    outcome = await service.execute(
        session, providers, claim=claim, company_id=principal.company_id, quote=quote
    )
    return TradeResponse.of(outcome.transaction, outcome.quote)


@router.post(
    "/api/v2/banking/trades/execute",
    response_model=TradeResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Execute a quote (FX trade)",
    description=TRADE_DESCRIPTION + " The quote must be the user's; `AccountId`, when given, "
    "must be the quote's account.",
    responses=error_responses(400, 404, 409, 503),
)
async def fx_execute_trade(
    userId: UserIdQuery,
    body: TradeRequest,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> TradeResponse:
    return await _trade(
        user_id=userId,
        account_id=body.AccountId,
        quote_id=body.QuoteId,
        request=request,
        providers=providers,
        session=session,
        principal=principal,
        idempotency_key=idempotency_key,
    )


@router.post(
    "/api/v2/banking/orders/trade",
    response_model=TradeResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Execute a quote (order)",
    description=TRADE_DESCRIPTION + " `AccountId` must be the quote's account; with `userId`, "
    "also that user's.",
    responses=error_responses(400, 404, 409, 503),
)
async def fx_order_trade(
    body: OrderTradeRequest,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    userId: OptionalUserIdQuery = None,
    idempotency_key: IdempotencyKeyHeader = None,
) -> TradeResponse:
    return await _trade(
        user_id=userId,
        account_id=body.AccountId,
        quote_id=body.QuoteId,
        request=request,
        providers=providers,
        session=session,
        principal=principal,
        idempotency_key=idempotency_key,
    )
