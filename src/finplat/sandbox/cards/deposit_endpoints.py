"""Sandbox stablecoin deposits at the card provider, and the DEPOSIT auto top-up they run."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from fastapi import Request
from pydantic import ConfigDict, Field

from finplat.cards import lookup
from finplat.cards.funding import deposits
from finplat.cards.funding.schemas import StableCoin
from finplat.cards.schemas import CardIdPath
from finplat.errors import error_responses
from finplat.http import path_ids  # noqa: F401 - registers the {name:id} convertor
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.money import AmountRange, DecimalAmount, requested_amount
from finplat.kit.schemas import RequestModel, ResponseModel, UserIdQuery
from finplat.users import service as users

router = api_router(tags=["Sandbox"])

# One USD cent: the smallest deposit the card provider settles into USD.
MIN_DEPOSIT = Decimal("0.01")
MAX_DEPOSIT = Decimal(1000000)


class StablecoinDeposit(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {"Amount": 25.5, "Currency": "USDC"},
            "allOf": [{"properties": {"Amount": {"multipleOf": 0.000001}}}],
        }
    )

    Amount: Annotated[
        DecimalAmount,
        AmountRange(at_least=MIN_DEPOSIT, at_most=MAX_DEPOSIT),
        Field(description="0.01 through 1000000, at most six decimals."),
    ]
    Currency: Annotated[StableCoin, Field(strict=False, description="USDC or USDT.")]


class DepositResult(ResponseModel):
    DepositId: int
    CardId: int
    Amount: DecimalAmount
    Currency: str
    CreditedAmount: DecimalAmount
    AutoTopupOrderId: int | None


@router.post(
    "/api/v2/sandbox/cards/{cardId:id}/deposits",
    response_model=DepositResult,
    summary="Receive a stablecoin deposit for a card (sandbox)",
    description="A USDC or USDT deposit arrives at the user's deposit address at the card "
    "provider (card-provider cards only: else 409 `DEPOSIT_NOT_SUPPORTED`; a cancelled card is "
    "409 `CARD_CANCELLED`). The provider settles it 1:1 into USD, rounded down to the cent "
    "(`CreditedAmount`), into the company's master account, and `card.deposit.received` is "
    "recorded (domain `card`); `DepositId` is that ledger transfer. Then, when the card's "
    "deposit auto top-up is enabled for `Currency`, the card is topped up by the lesser of "
    "`CreditedAmount` and the rule's `Amount` (a top-up, with its fee; none below 5.00 USD), "
    "within `MonthlyLimit` (`AutoTopupOrderId`); a top-up the provider refuses leaves the "
    "deposit in the master account. A provider timeout during the top-up is 503 with the "
    "deposit received and the top-up reserved: retry with the same `Idempotency-Key` to finish "
    "it (the deposit is not received twice).",
    responses=error_responses(400, 404, 409, 503),
)
async def cards_sandbox_deposit(
    cardId: CardIdPath,
    userId: UserIdQuery,
    body: StablecoinDeposit,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> DepositResult:
    company_id = principal.company_id
    money = requested_amount(body.Amount, body.Currency.value)
    claim = await claim_request(request, session, principal, idempotency_key)
    await users.get_user(session, company_id=company_id, user_id=userId)
    card = await lookup.find_card(session, company_id=company_id, card_id=cardId, user_id=userId)
    deposit = await deposits.receive(
        session, providers, claim=claim, company_id=company_id, card_id=card.id, money=money
    )
    return DepositResult(
        DepositId=deposit.deposit_id,
        CardId=deposit.card_id,
        Amount=deposit.money.amount,
        Currency=deposit.money.currency,
        CreditedAmount=deposit.credited.amount,
        AutoTopupOrderId=deposit.auto_topup_order_id,
    )
