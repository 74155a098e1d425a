"""Sandbox purchases: the card network asks for an authorization, the platform decides in real
time (`cards.transactions.decision`), and the sandbox card provider reports the purchase's
events (authorization, clearing, reversal, incremental, refund) as `card.transaction`
callbacks through the one inbound path, delivered at once. The ledger moves only there."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Annotated

from fastapi import Body, Path, Request
from pydantic import ConfigDict, Field
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards import lookup, programs
from finplat.cards.errors import CardNotFound
from finplat.cards.funding import decline_fees
from finplat.cards.funding.schemas import CardCurrency, cents
from finplat.cards.schemas import CardIdPath
from finplat.cards.transactions import decision, follow_up, service
from finplat.cards.transactions.models import CardTransaction
from finplat.cards.transactions.purchase_card import PurchaseCard
from finplat.cards.transactions.schemas import MID_PATTERN, CardPurchase, RuleFired
from finplat.config import Settings
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.kit.fields import SafeText
from finplat.kit.money import AmountRange, DecimalAmount, from_minor, requested_amount
from finplat.kit.schemas import RequestModel, ResponseModel, UserIdQuery
from finplat.providers.calls import commit_then_call
from finplat.providers.cards.port import ProviderCardTransaction
from finplat.providers.errors import ProviderRejected, ProviderUnavailable
from finplat.providers.registry import Providers
from finplat.providers.sandbox import delivery as sandbox_delivery

router = api_router(tags=["Sandbox"])

AuthorizationIdPath = Annotated[
    str,
    Path(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_\-]+$",
        description="The `AuthorizationId` the sandbox authorization answered.",
    ),
]
PurchaseAmount = Annotated[
    DecimalAmount, AmountRange(greater_than=Decimal(0), at_most=Decimal(1000000))
]


class Authorization(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "Amount": 12.5,
                "Currency": "USD",
                "Merchant": "Coffee Shop",
                "Mcc": "5814",
                "Country": "GB",
            },
            **cents("Amount"),
        }
    )

    Amount: PurchaseAmount
    Currency: Annotated[CardCurrency, Field(strict=False)]
    Merchant: Annotated[SafeText, Field(min_length=1, max_length=100)]
    Mcc: Annotated[str | None, Field(pattern=r"^[0-9]{4}$", description="Merchant category.")] = (
        None
    )
    Country: Annotated[
        str | None, Field(pattern=r"^[A-Z]{2}$", description="Merchant country (ISO 3166).")
    ] = None
    Mid: Annotated[
        str | None,
        Field(
            pattern=MID_PATTERN,
            description="The acquirer's merchant id (MID) the network reports, which loyalty "
            "matches to a merchant.",
        ),
    ] = None
    PartialApproval: Annotated[
        bool,
        Field(
            description="The merchant accepts a partial approval: a card short of the amount "
            "is approved for what it has (`ResponseCode` `10`)."
        ),
    ] = False


class AuthorizationResult(ResponseModel):
    AuthorizationId: str
    Approved: bool
    ResponseCode: str = Field(description="`00` approved, `10` partially approved, else declined.")
    DeclineReason: str | None
    RulesFired: list[RuleFired]
    ApprovedAmount: DecimalAmount
    CardTransactionId: int
    Status: str
    CardId: int
    Amount: DecimalAmount
    Currency: str
    Merchant: str
    DeclineFee: DecimalAmount = Field(
        description="The decline fee this decline cost (0 when none applies)."
    )
    DeclineFeeStatus: decline_fees.DeclineFeeStatus = Field(
        description="`NONE`; `COLLECTED` from the card; `PENDING` when the provider has not "
        "answered yet (the fee stays reserved on the card); `OUTSTANDING` when the card could "
        "not pay it and is `SYSTEM_BLOCKED`."
    )
    CardStatus: str
    AutoTopupOrderId: int | None


class Settlement(RequestModel):
    model_config = ConfigDict(json_schema_extra={"example": {"Amount": 10.0}, **cents("Amount")})

    Amount: PurchaseAmount | None = None


class Increment(RequestModel):
    model_config = ConfigDict(json_schema_extra={"example": {"Amount": 5.0}, **cents("Amount")})

    Amount: PurchaseAmount


async def _deliver(request: Request, company_id: int) -> None:
    settings: Settings = request.app.state.settings
    await sandbox_delivery.deliver_due(
        request.app.state.session_factory,
        secret=settings.provider_callback_secret,
        company_id=company_id,
    )


@router.post(
    "/api/v2/sandbox/cards/{cardId}/authorizations",
    response_model=AuthorizationResult,
    summary="Make a purchase with a card (sandbox)",
    description="The network asks for an authorization: the platform decides in real time "
    "from the card's available balance (posted - holds) and its state (`Approved`, "
    "`ResponseCode`, typed `DeclineReason`: `INSUFFICIENT_FUNDS`, `CARD_FROZEN`, "
    "`CARD_AUTO_LOCKED`, `SYSTEM_BLOCKED`, `CARD_CANCELLED`, `CARD_INACTIVE`, "
    "`CURRENCY_NOT_SUPPORTED`, `RULE_DECLINED`), and the sandbox card provider reports the "
    "authorization (a hold on the card) or the decline through its `card.transaction` "
    "callback, delivered at once (`card.transaction.authorized` / `.declined`). Settle it with "
    "`.../clear` or `.../reverse`. A decline may cost the tier's decline fee (a card that "
    "cannot pay it becomes `SYSTEM_BLOCKED`); a low balance after an approval or a decline "
    "for insufficient funds runs the card's auto top-up.",
    responses=error_responses(400, 404, 503),
)
async def cards_sandbox_authorize(
    cardId: CardIdPath,
    userId: UserIdQuery,
    body: Authorization,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> AuthorizationResult:
    company_id = principal.company_id
    money = requested_amount(body.Amount, body.Currency.value)
    found = await decision.user_card_to_decide(
        session, company_id=company_id, card_id=cardId, user_id=userId
    )
    if found is None:  # which 404: the card's or its user's
        await lookup.find_card(session, company_id=company_id, card_id=cardId, user_id=userId)
        raise CardNotFound()
    card, configured = found
    simulation = programs.simulation_of(providers, card, what="purchases")
    card_ref = programs.provider_card_id(card)
    authorization_id = simulation.new_authorization_id()
    decided = await decision.decide(
        session,
        company_id=company_id,
        card=PurchaseCard.of(card),
        configured=configured,
        allow_loopback=bool(request.app.state.settings.allow_loopback_webhooks),
        request=decision.AuthorizationRequest(
            authorization_id=authorization_id,
            amount_minor=money.minor,
            currency=money.currency,
            merchant=body.Merchant,
            mcc=body.Mcc,
            country=body.Country,
            partial_allowed=body.PartialApproval,
            mid=body.Mid,
        ),
    )
    txn_id = decided.transaction_id
    try:
        await commit_then_call(
            session,
            providers.policy,
            provider=card.provider,
            operation="authorize",
            call=lambda: simulation.authorize(
                company_id=company_id,
                card_id=card_ref,
                authorization_id=authorization_id,
                amount_minor=decided.approved_minor or money.minor,
                currency=money.currency,
                merchant=body.Merchant,
                mcc=body.Mcc,
                country=body.Country,
                platform_decline=None if decided.approved else decided.decline_reason,
                just_in_time=decided.partner_decision is not None,
                mid=body.Mid,
            ),
            idempotent=False,
        )
    except (ProviderUnavailable, ProviderRejected):
        # The provider never took the purchase: what the decision held goes back.
        await service.release_unreported(session, company_id=company_id, txn_id=txn_id)
        await session.commit()
        raise
    await _deliver(request, company_id)
    txn, card = await service.find_with_card(session, company_id=company_id, txn_id=txn_id)
    fee, rule = decline_fees.NO_FEE, None
    if not decided.partner_hosted:  # the partner's balance has no fee or top-up of finplat's
        fee = await follow_up.decline_fee(session, providers, card=card, txn=txn)
        rule = follow_up.triggered_rule(txn)
    approved = not txn.declined
    # Answered from the purchase as it stands now: the auto top-up does not move it, and may
    # roll the session back (which would leave `txn` to be read again).
    answer = AuthorizationResult(
        AuthorizationId=authorization_id,
        Approved=approved,
        ResponseCode=txn.response_code or decision.response_code(txn.decline_reason),
        DeclineReason=txn.decline_reason,
        RulesFired=CardPurchase.of(txn, []).RulesFired,
        ApprovedAmount=from_minor(txn.authorized_minor if approved else 0, money.currency),
        CardTransactionId=txn.id,
        Status=txn.status,
        CardId=card.id,
        Amount=money.amount,
        Currency=money.currency,
        Merchant=body.Merchant,
        DeclineFee=from_minor(fee.amount_minor, money.currency),
        DeclineFeeStatus=fee.status,
        CardStatus=card.status,
        AutoTopupOrderId=None,
    )
    order_id = await follow_up.top_up(session, providers, card, rule, trigger=authorization_id)
    if not approved or order_id is not None:
        await session.refresh(card)  # its status after a decline fee or a top-up
    return answer.model_copy(update={"CardStatus": card.status, "AutoTopupOrderId": order_id})


async def _purchase_event(
    *,
    cardId: int,
    userId: int,
    authorizationId: str,
    type_: str,
    amount: Decimal | None,
    request: Request,
    providers: Providers,
    session: AsyncSession,
    company_id: int,
) -> CardPurchase:
    card = await lookup.find_card(session, company_id=company_id, card_id=cardId, user_id=userId)
    txn = await service.find_by_authorization(
        session, company_id=company_id, card=card, authorization_id=authorizationId
    )
    simulation = programs.simulation_of(providers, card, what="purchases")
    card_ref = programs.provider_card_id(card)
    minor = None if amount is None else requested_amount(amount, txn.currency).minor
    call: Callable[[], Awaitable[ProviderCardTransaction]] = lambda: simulation.purchase_event(  # noqa: E731
        company_id=company_id,
        card_id=card_ref,
        authorization_id=authorizationId,
        type_=type_,
        amount_minor=minor,
        just_in_time=txn.partner_decision is not None,
    )
    await commit_then_call(
        session,
        providers.policy,
        provider=card.provider,
        operation="authorize",
        call=call,
        idempotent=False,
    )
    await _deliver(request, company_id)
    fresh: CardTransaction = await service.find(session, company_id=company_id, txn_id=txn.id)
    events = await service.events_of(session, company_id=company_id, txn=fresh)
    return CardPurchase.of(fresh, events)


SETTLE_RESPONSES = error_responses(400, 404, 409, 503)


@router.post(
    "/api/v2/sandbox/cards/{cardId}/authorizations/{authorizationId}/clear",
    response_model=CardPurchase,
    summary="Clear an authorized purchase (sandbox)",
    description="The merchant's clearing: `Amount` (optional; what is still held when left "
    "out) is posted from the hold, the rest of the hold released; a clearing above the hold "
    "posts the difference too. Reported as `card.transaction.cleared`. 409 when nothing is "
    "held and no amount is given, or the card cannot cover a clearing above its hold.",
    responses=SETTLE_RESPONSES,
)
async def cards_sandbox_clear(
    cardId: CardIdPath,
    authorizationId: AuthorizationIdPath,
    userId: UserIdQuery,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    body: Annotated[Settlement | None, Body()] = None,
) -> CardPurchase:
    return await _purchase_event(
        cardId=cardId,
        userId=userId,
        authorizationId=authorizationId,
        type_="CLEARING",
        amount=body.Amount if body else None,
        request=request,
        providers=providers,
        session=session,
        company_id=principal.company_id,
    )


@router.post(
    "/api/v2/sandbox/cards/{cardId}/authorizations/{authorizationId}/reverse",
    response_model=CardPurchase,
    summary="Reverse an authorized purchase (sandbox)",
    description="The merchant releases the hold, fully (no `Amount`) or in part. Reported as "
    "`card.transaction.reversed`. After clearing a reversal moves no money (a refund does).",
    responses=SETTLE_RESPONSES,
)
async def cards_sandbox_reverse(
    cardId: CardIdPath,
    authorizationId: AuthorizationIdPath,
    userId: UserIdQuery,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    body: Annotated[Settlement | None, Body()] = None,
) -> CardPurchase:
    return await _purchase_event(
        cardId=cardId,
        userId=userId,
        authorizationId=authorizationId,
        type_="REVERSAL",
        amount=body.Amount if body else None,
        request=request,
        providers=providers,
        session=session,
        company_id=principal.company_id,
    )


@router.post(
    "/api/v2/sandbox/cards/{cardId}/authorizations/{authorizationId}/increment",
    response_model=CardPurchase,
    summary="Increase an authorized purchase's hold (sandbox)",
    description="An incremental authorization (a hotel, a fuel pump): `Amount` more is held. "
    "Reported as `card.transaction.authorized`.",
    responses=SETTLE_RESPONSES,
)
async def cards_sandbox_increment(
    cardId: CardIdPath,
    authorizationId: AuthorizationIdPath,
    userId: UserIdQuery,
    body: Increment,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CardPurchase:
    return await _purchase_event(
        cardId=cardId,
        userId=userId,
        authorizationId=authorizationId,
        type_="INCREMENTAL",
        amount=body.Amount,
        request=request,
        providers=providers,
        session=session,
        company_id=principal.company_id,
    )


@router.post(
    "/api/v2/sandbox/cards/{cardId}/authorizations/{authorizationId}/refund",
    response_model=CardPurchase,
    summary="Refund a cleared purchase (sandbox)",
    description="The merchant refunds `Amount` to the card (a credit). Reported as "
    "`card.transaction.refunded`.",
    responses=SETTLE_RESPONSES,
)
async def cards_sandbox_refund(
    cardId: CardIdPath,
    authorizationId: AuthorizationIdPath,
    userId: UserIdQuery,
    body: Increment,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CardPurchase:
    return await _purchase_event(
        cardId=cardId,
        userId=userId,
        authorizationId=authorizationId,
        type_="REFUND",
        amount=body.Amount,
        request=request,
        providers=providers,
        session=session,
        company_id=principal.company_id,
    )
