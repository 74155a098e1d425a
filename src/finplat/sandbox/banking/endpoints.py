"""Sandbox banking simulations: incoming credits to a budget."""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum
from typing import Annotated

from fastapi import Path, Request, status
from pydantic import ConfigDict, Field

from finplat.banking.identifiers import BUDGET_ID_PATTERN
from finplat.banking.schemas import BudgetCurrency
from finplat.config import Settings
from finplat.errors import ValidationFailed, error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.kit.fields import SafeText
from finplat.kit.money import (
    AmountRange,
    DecimalAmount,
    precision_by_currency,
    requested_amount,
)
from finplat.kit.schemas import RequestModel, UserIdQuery
from finplat.sandbox.banking import incoming as banking
from finplat.transactions.schemas import TransactionResponse

router = api_router(tags=["Sandbox"])

MAX_CREDIT = Decimal("10000000")
PaymentScheme = StrEnum("PaymentScheme", {s: s for s in banking.SCHEME_CURRENCIES})  # type: ignore[misc]
BudgetIdPath = Annotated[
    str, Path(pattern=BUDGET_ID_PATTERN, description="The `BudgetId` the service returned.")
]


class IncomingCredit(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {"Currency": "EUR", "Amount": 250.0, "Scheme": "SEPA", "SenderName": "Ada"},
            "allOf": [
                # Each scheme carries its own currencies.
                {
                    "anyOf": [
                        {"properties": {"Scheme": {"const": s}, "Currency": {"enum": list(cs)}}}
                        for s, cs in banking.SCHEME_CURRENCIES.items()
                    ]
                },
                {"anyOf": precision_by_currency("Currency", "Amount")},
            ],
        }
    )

    Currency: Annotated[BudgetCurrency, Field(strict=False)]
    Amount: Annotated[DecimalAmount, AmountRange(greater_than=Decimal(0), at_most=MAX_CREDIT)]
    Scheme: Annotated[PaymentScheme, Field(strict=False)] = Field(
        description="SEPA carries EUR, FPS GBP, SWIFT EUR, GBP or USD, CRYPTO USDC or USDT."
    )
    SenderName: Annotated[SafeText, Field(max_length=100)]
    Reference: Annotated[SafeText, Field(max_length=140)] | None = None


@router.post(
    "/api/v2/sandbox/banking/budgets/{budgetId}/credits",
    response_model=TransactionResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Receive money into a budget (sandbox)",
    description="The sandbox banking provider receives a payment for the budget and notifies "
    "the platform, which posts it to the ledger and records a `COMPLETED` "
    "`INCOMING_PAYMENT` transaction and a `payment.received` event. A currency the budget "
    "does not hold is 409 `CURRENCY_NOT_IN_BUDGET`.",
    responses=error_responses(400, 404, 409, 503),
)
async def credit_budget(
    budgetId: BudgetIdPath,
    userId: UserIdQuery,
    body: IncomingCredit,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> TransactionResponse:
    currency, scheme = str(body.Currency), str(body.Scheme)
    if currency not in banking.SCHEME_CURRENCIES[scheme]:
        raise ValidationFailed(
            validation_errors={"Currency": [f"{scheme} does not carry {currency}."]},
        )
    money = requested_amount(body.Amount, currency)
    settings: Settings = request.app.state.settings
    transaction = await banking.credit_budget(
        session,
        providers,
        request.app.state.session_factory,
        secret=settings.provider_callback_secret,
        company_id=principal.company_id,
        user_id=userId,
        budget_id=budgetId,
        money=money,
        scheme=scheme,
        sender_name=body.SenderName,
        reference=body.Reference,
    )
    return TransactionResponse.of(transaction)
