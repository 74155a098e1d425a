"""Sandbox purchases: a card authorization at a merchant, approved (hold, then clearing) or
declined, with its ledger effects, events, decline fee and auto top-up."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

import structlog
from pydantic import ConfigDict, Field

from finplat.cards import lookup, programs
from finplat.cards.funding import auto_topup, decline_fees
from finplat.cards.funding import service as funding
from finplat.cards.funding.schemas import CardCurrency, cents
from finplat.cards.schemas import CardIdPath
from finplat.errors import ApiError, error_responses
from finplat.events import service as events
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.kit.fields import SafeText
from finplat.kit.money import AmountRange, DecimalAmount, from_minor, requested_amount
from finplat.kit.schemas import RequestModel, ResponseModel, UserIdQuery
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.service import CompanyAccount
from finplat.providers.calls import commit_then_call

router = api_router(tags=["Sandbox"])
log = structlog.get_logger("finplat.cards.simulation")
INSUFFICIENT_FUNDS = "INSUFFICIENT_FUNDS"
DOMAIN = "card"


class Authorization(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {"Amount": 12.5, "Currency": "USD", "Merchant": "Coffee Shop"},
            **cents("Amount"),
        }
    )

    Amount: Annotated[DecimalAmount, AmountRange(greater_than=Decimal(0), at_most=Decimal(1000000))]
    Currency: Annotated[CardCurrency, Field(strict=False)]
    Merchant: Annotated[SafeText, Field(min_length=1, max_length=100)]


class AuthorizationResult(ResponseModel):
    TransactionId: str
    CardId: int
    Status: str  # SETTLED | DECLINED
    Amount: DecimalAmount
    Currency: str
    Merchant: str
    DeclineReason: str | None
    DeclineFee: DecimalAmount = Field(
        description="The decline fee this decline cost (0 when none applies)."
    )
    DeclineFeeStatus: decline_fees.DeclineFeeStatus = Field(
        description="`NONE`; `COLLECTED` from the card; `PENDING` when the provider has not "
        "answered yet (the fee stays reserved on the card and is settled with the provider's "
        "answer); `OUTSTANDING` when the card could not pay it and is `SYSTEM_BLOCKED`."
    )
    CardStatus: str
    AutoTopupOrderId: int | None


@router.post(
    "/api/v2/sandbox/cards/{cardId}/authorizations",
    response_model=AuthorizationResult,
    summary="Make a purchase with a card (sandbox)",
    description="The sandbox card provider authorizes the purchase (a pending hold: card -> "
    "settlement) and clears it (posted), or declines it (insufficient funds, frozen, blocked "
    "or cancelled card). Records `card.transaction.authorized`, `.cleared` or `.declined` "
    "(domain `card`). A decline may cost the tier's decline fee (a card that cannot pay it "
    "becomes `SYSTEM_BLOCKED`; one the provider leaves unanswered stays reserved, "
    "`DeclineFeeStatus` `PENDING`); a low balance after clearing or a decline for insufficient "
    "funds runs the card's auto top-up.",
    responses=error_responses(400, 404, 503),
)
async def cards_sandbox_authorize(
    cardId: CardIdPath,
    userId: UserIdQuery,
    body: Authorization,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> AuthorizationResult:
    company_id = principal.company_id
    money = requested_amount(body.Amount, body.Currency.value)
    card = await lookup.find_card(session, company_id=company_id, card_id=cardId, user_id=userId)
    simulation = programs.simulation_of(providers, card, what="purchases")
    card_ref = programs.provider_card_id(card)
    merchant = body.Merchant
    txn = await commit_then_call(
        session,
        providers.policy,
        provider=card.provider,
        operation="authorize",
        call=lambda: simulation.authorize(
            company_id=company_id,
            card_id=card_ref,
            amount_minor=money.minor,
            currency=money.currency,
            merchant=merchant,
        ),
        idempotent=False,
    )
    data = {
        "cardId": card.id,
        "userId": card.user_id,
        "transactionId": txn.transaction_id,
        "amount": money.amount,
        "currency": money.currency,
        "merchant": merchant,
    }
    fee, rule = decline_fees.NO_FEE, None
    if txn.status == "DECLINED":
        await events.record(
            session,
            company_id=company_id,
            type_="card.transaction.declined",
            domain=DOMAIN,
            provider=card.provider,
            data=data | {"declineReason": txn.decline_reason},
        )
        fee = await decline_fees.charge(
            session, providers, card=card, transaction_id=txn.transaction_id
        )
        if txn.decline_reason == INSUFFICIENT_FUNDS:
            rule = auto_topup.FAILED_TX
    else:
        # Lock the card before the ledger accounts (the order of every card money path).
        card = await lookup.find_card(session, company_id=company_id, card_id=card.id, lock=True)
        account = await funding.card_account(session, card)
        settlement = await ledger.company_account(
            session, company_id=company_id, kind=CompanyAccount.SETTLEMENT, currency=money.currency
        )
        hold = await ledger.create_pending(
            session,
            company_id=company_id,
            legs=[Leg(account.id, -money.minor), Leg(settlement.id, money.minor)],
            code="card.purchase",
            expires_at=None,
            reference=txn.transaction_id,
            details={"cardId": card.id, "merchant": merchant},
        )
        await events.record(
            session,
            company_id=company_id,
            type_="card.transaction.authorized",
            domain=DOMAIN,
            provider=card.provider,
            data=data,
        )
        await ledger.post_pending(session, company_id=company_id, pending_id=hold.transfer_id)
        held = await ledger.balance(session, company_id=company_id, account_id=account.id)
        card.last_balance_minor = held.posted
        await events.record(
            session,
            company_id=company_id,
            type_="card.transaction.cleared",
            domain=DOMAIN,
            provider=card.provider,
            data=data,
        )
        rule = auto_topup.LOW_BALANCE
    await session.commit()
    order_id = None
    if rule is not None:
        try:
            order_id = await auto_topup.run(
                session,
                providers,
                company_id=company_id,
                card_id=card.id,
                rule=rule,
                trigger=txn.transaction_id,
            )
        except ApiError as exc:
            await session.rollback()
            log.warning("auto_topup_failed", card_id=card.id, code=exc.code)
    fresh = await lookup.find_card(session, company_id=company_id, card_id=cardId)
    return AuthorizationResult(
        TransactionId=txn.transaction_id,
        CardId=fresh.id,
        Status=txn.status,
        Amount=money.amount,
        Currency=money.currency,
        Merchant=merchant,
        DeclineReason=txn.decline_reason,
        DeclineFee=from_minor(fee.amount_minor, money.currency),
        DeclineFeeStatus=fee.status,
        CardStatus=fresh.status,
        AutoTopupOrderId=order_id,
    )
