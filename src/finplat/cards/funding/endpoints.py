"""Card top-up, unload, top-up configuration and the per-tier card fee schedules."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from fastapi import Path as PathParam
from fastapi import Query, Request

from finplat.cards import lookup
from finplat.cards.funding import auto_topup, fees
from finplat.cards.funding import service as funding
from finplat.cards.funding.schemas import (
    AutoTopupRule,
    AutoTopupSettings,
    AutoTopupUsage,
    DepositRule,
    FailedTxRule,
    FeeSchedule,
    FeeScheduleResponse,
    LowBalanceRule,
    TopupConfiguration,
    TopupRequest,
    TopupResponse,
    UnloadRequest,
    UnloadResponse,
)
from finplat.cards.models import Card
from finplat.errors import error_responses
from finplat.http import path_ids  # noqa: F401 - registers the {name:id} convertor
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.money import from_minor, requested_amount
from finplat.kit.schemas import (
    MAX_ID,
    PARAMETER_ID,
    TierIdPath,
    UserIdQuery,
)

router = api_router(tags=["Cards"])


@router.post(
    "/api/v2/cards/topup",
    response_model=TopupResponse,
    summary="Top up a card",
    description="Loads the card from the company's master account (USD). `Value` is 5.00 "
    "through 250000.00 (else 400 `INVALID_AMOUNT`). The tier's fee (percentage rounded up to "
    "the cent, plus the fixed fee) is taken from `Value`; an outstanding decline fee is paid "
    "first (and the card unblocked). A cancelled card accepts no money (409 `CARD_CANCELLED`); "
    "too little in the master account is 409 `INSUFFICIENT_FUNDS`. A provider timeout is 503 "
    "with the money reserved: retry with the same `Idempotency-Key` to finish it (a top-up "
    "the provider refused meanwhile answers 409 `CARD_FUNDING_FAILED`).",
    responses=error_responses(400, 404, 409, 503),
)
async def cards_topup(
    body: TopupRequest,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> TopupResponse:
    money = requested_amount(body.Value, body.Token.value, field="Value")
    claim = await claim_request(request, session, principal, idempotency_key)
    result = await funding.topup(
        session,
        providers,
        claim=claim,
        company_id=principal.company_id,
        card_id=body.CardId,
        money=money,
    )
    row = result.funding
    message = "Top-up completed."
    if row.fee_paid_minor:
        paid = from_minor(row.fee_paid_minor, row.currency)
        message = f"Top-up completed; an outstanding decline fee of {paid} was paid first."
    return TopupResponse(
        Success=True,
        OrderId=row.id,
        Token=row.currency,
        Value=from_minor(row.amount_minor, row.currency),
        Fee=from_minor(row.fee_minor, row.currency),
        Message=message,
        CreatedAt=row.created_at,
    )


@router.post(
    "/api/v2/cards/unload-card",
    response_model=UnloadResponse,
    summary="Unload a card",
    description="Moves `Value` from the card back to the company's master account, less the "
    "tier's unload fee (`NetAmount` = `ActualAmount` - `Fee`). More than the card's available "
    "balance is 409 `INSUFFICIENT_CARD_BALANCE`; a cancelled card is 409 `CARD_CANCELLED`. "
    "A provider timeout is 503 with the money reserved: retry with the same `Idempotency-Key` "
    "to finish it (an unload the provider refused meanwhile answers 409 `CARD_FUNDING_FAILED`).",
    responses=error_responses(400, 404, 409, 503),
)
async def cards_unload(
    body: UnloadRequest,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> UnloadResponse:
    money = requested_amount(body.Value, body.Currency.value, field="Value")
    claim = await claim_request(request, session, principal, idempotency_key)
    result = await funding.unload(
        session,
        providers,
        claim=claim,
        company_id=principal.company_id,
        card_id=body.CardId,
        money=money,
    )
    row = result.funding
    actual = from_minor(row.amount_minor, row.currency)
    fee = from_minor(row.fee_minor, row.currency)
    return UnloadResponse(
        Success=True,
        CardId=row.card_id,
        RequestedAmount=from_minor(row.amount_minor, row.currency),
        ActualAmount=actual,
        Fee=fee,
        NetAmount=actual - fee,
        Currency=row.currency,
        Status=row.status,
        TransactionId=row.id,
        CompletedAt=row.completed_at,
    )


@router.get(
    "/api/v2/cards/topup/configuration",
    response_model=TopupConfiguration,
    summary="Top-up limits and fees",
    description="The top-up minimum and maximum (the same as the limits) and the fee of the "
    "card's tier (`cardId`), or the default fee without `cardId`.",
    responses=error_responses(400, 404),
)
async def cards_topup_configuration(
    session: DbSession,
    principal: CurrentPrincipal,
    cardId: Annotated[int | None, Query(ge=1, le=MAX_ID), PARAMETER_ID] = None,
) -> TopupConfiguration:
    schedule = fees.DEFAULT_SCHEDULE
    if cardId is not None:
        card = await lookup.find_card(session, company_id=principal.company_id, card_id=cardId)
        schedule = await fees.schedule_for(
            session, company_id=principal.company_id, tier_id=card.tier_id
        )
    usd = funding.TOPUP_CURRENCY
    return TopupConfiguration(
        Token=usd,
        Minimum=funding.MIN_TOPUP,
        Maximum=funding.MAX_TOPUP,
        FeePercentage=schedule.topup_percent,
        FixedFee=from_minor(schedule.topup_fixed_minor, usd),
    )


@router.get(
    "/api/v2/cards/fee-schedules/{tierId}",
    response_model=FeeScheduleResponse,
    summary="A tier's card fees",
    responses=error_responses(400, 404),
)
async def cards_get_fee_schedule(
    tierId: TierIdPath, session: DbSession, principal: CurrentPrincipal
) -> FeeScheduleResponse:
    schedule = await fees.tier_schedule(session, company_id=principal.company_id, tier_id=tierId)
    return FeeScheduleResponse.of(tierId, schedule)


@router.put(
    "/api/v2/cards/fee-schedules/{tierId}",
    response_model=FeeScheduleResponse,
    summary="Set a tier's card fees",
    description="Top-up and unload fees (percentage, rounded up to the cent, plus a fixed "
    "USD fee) and the decline fee (USD; collected for declines since 2026-07-01; 0 = none).",
    responses=error_responses(400, 404),
)
async def cards_set_fee_schedule(
    tierId: TierIdPath, body: FeeSchedule, session: DbSession, principal: CurrentPrincipal
) -> FeeScheduleResponse:
    usd = funding.TOPUP_CURRENCY

    def minor(value: Decimal, name: str) -> int:
        return requested_amount(value, usd, field=name).minor

    schedule = fees.FeeSchedule(
        topup_percent=body.TopupFeePercentage,
        topup_fixed_minor=minor(body.TopupFixedFee, "TopupFixedFee"),
        unload_percent=body.UnloadFeePercentage,
        unload_fixed_minor=minor(body.UnloadFixedFee, "UnloadFixedFee"),
        decline_fee_minor=minor(body.DeclineFee, "DeclineFee"),
    )
    saved = await fees.set_schedule(
        session, company_id=principal.company_id, tier_id=tierId, schedule=schedule
    )
    return FeeScheduleResponse.of(tierId, saved)


# ------------------------------------------------------------------------------ auto top-up


async def _settings(session: DbSession, card: Card) -> AutoTopupSettings:
    rules = await auto_topup.rules_of(session, card.company_id, card.id)
    used = await auto_topup.usage(session, card)
    cur = card.currency

    def view(rule: str) -> AutoTopupRule | None:
        row = rules.get(rule)
        if row is None:
            return None
        return AutoTopupRule(
            Enabled=row.enabled,
            Amount=from_minor(row.amount_minor, cur),
            MonthlyLimit=from_minor(row.monthly_limit_minor, cur),
            Threshold=None if row.threshold_minor is None else from_minor(row.threshold_minor, cur),
            Currency=row.deposit_currency,
        )

    return AutoTopupSettings(
        CardId=card.id,
        LowBalance=view(auto_topup.LOW_BALANCE),
        FailedTransaction=view(auto_topup.FAILED_TX),
        Deposit=view(auto_topup.DEPOSIT),
        CurrentMonth=AutoTopupUsage(
            Count=used.count, Amount=from_minor(used.amount_minor, cur), Currency=cur
        ),
    )


@router.get(
    "/api/v2/cards/{cardId:id}/auto-topup",
    response_model=AutoTopupSettings,
    summary="A card's auto top-up settings",
    description="The card's auto top-up rules and the current month's automatic top-ups.",
    responses=error_responses(400, 404),
)
async def cards_get_auto_topup(
    cardId: Annotated[int, PathParam(ge=1, le=MAX_ID), PARAMETER_ID],
    userId: UserIdQuery,
    session: DbSession,
    principal: CurrentPrincipal,
) -> AutoTopupSettings:
    card = await lookup.user_card(
        session, company_id=principal.company_id, user_id=userId, card_id=cardId
    )
    return await _settings(session, card)


async def _configure(
    session: DbSession,
    company_id: int,
    user_id: int,
    body: FailedTxRule,
    rule: str,
    threshold: Decimal | None = None,
    currency: str | None = None,
) -> AutoTopupSettings:
    # Under the card's lock: settings of a rule racing the rule's first one would all insert
    # it, and all but one would fail on the unique (card, rule).
    card = await lookup.user_card(
        session, company_id=company_id, user_id=user_id, card_id=body.CardId, lock=True
    )

    def minor(value: Decimal, name: str) -> int:
        return requested_amount(value, card.currency, field=name).minor

    await auto_topup.configure(
        session,
        card=card,
        rule=rule,
        enabled=body.Enabled,
        amount_minor=minor(body.Amount, "Amount"),
        monthly_limit_minor=minor(body.MonthlyLimit, "MonthlyLimit"),
        threshold_minor=None if threshold is None else minor(threshold, "Threshold"),
        deposit_currency=currency,
    )
    return await _settings(session, card)


@router.post(
    "/api/v2/cards/auto-topup/low-balance",
    response_model=AutoTopupSettings,
    summary="Set the low-balance auto top-up",
    description="After a purchase leaves the card's balance below `Threshold`, the card is "
    "topped up by `Amount` (a top-up, with its fee), while the month's automatic top-ups stay "
    "within `MonthlyLimit`.",
    responses=error_responses(400, 404, 409),
)
async def cards_auto_topup_low_balance(
    userId: UserIdQuery, body: LowBalanceRule, session: DbSession, principal: CurrentPrincipal
) -> AutoTopupSettings:
    rule = FailedTxRule(
        CardId=body.CardId, Enabled=body.Enabled, Amount=body.Amount, MonthlyLimit=body.MonthlyLimit
    )
    return await _configure(
        session, principal.company_id, userId, rule, auto_topup.LOW_BALANCE, body.Threshold
    )


@router.post(
    "/api/v2/cards/auto-topup/failed-tx",
    response_model=AutoTopupSettings,
    summary="Set the declined-transaction auto top-up",
    description="After a purchase is declined for insufficient funds, the card is topped up "
    "by `Amount`, within `MonthlyLimit` per month.",
    responses=error_responses(400, 404, 409),
)
async def cards_auto_topup_failed_tx(
    userId: UserIdQuery, body: FailedTxRule, session: DbSession, principal: CurrentPrincipal
) -> AutoTopupSettings:
    return await _configure(session, principal.company_id, userId, body, auto_topup.FAILED_TX)


@router.post(
    "/api/v2/cards/auto-topup/deposit",
    response_model=AutoTopupSettings,
    summary="Set the deposit auto top-up",
    description="After a deposit in `Currency` (USDC or USDT) at the user's deposit address "
    "at the card provider, credited 1:1 in USD to the company's master account, the card is "
    "topped up by the lesser of the deposited USD value and `Amount` (a top-up, with its fee; "
    "none below 5.00 USD), within `MonthlyLimit` per month; otherwise the deposit stays in the "
    "master account. Card-provider cards only (409 `AUTO_TOPUP_NOT_SUPPORTED` otherwise).",
    responses=error_responses(400, 404, 409),
)
async def cards_auto_topup_deposit(
    userId: UserIdQuery, body: DepositRule, session: DbSession, principal: CurrentPrincipal
) -> AutoTopupSettings:
    return await _configure(
        session, principal.company_id, userId, body, auto_topup.DEPOSIT, None, body.Currency.value
    )
