from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated

from fastapi import Path, Query
from pydantic import ConfigDict, Field

from finplat.banking.schemas import BudgetCurrency, BudgetIdField
from finplat.kit.fields import SafeText
from finplat.kit.money import AmountRange, DecimalAmount, from_minor, precision_by_currency
from finplat.kit.pagination import Page
from finplat.kit.schemas import RequestModel, ResponseModel
from finplat.payments.requests.models import PaymentRequest, PaymentRequestStatus
from finplat.payments.requests.service import REQUEST_ID_PATTERN
from finplat.payments.schemas import PaymentExpiry
from finplat.providers.names import BankProvider

MAX_REQUEST = Decimal("1000000")

PaymentRequestIdPath = Annotated[
    str,
    Path(
        pattern=REQUEST_ID_PATTERN, description="The payment request's `Id` the service returned."
    ),
]
StatusQuery = Annotated[
    PaymentRequestStatus | None, Query(alias="status", description="Only requests in this state.")
]
BudgetIdQuery = Annotated[
    str | None,
    Query(
        alias="budgetId",
        pattern=r"^bud_[0-9a-f]{24}$",
        description="Only requests into this budget.",
    ),
]


class PaymentRequestCreate(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "Amount": 49.9,
                "Currency": "EUR",
                "Description": "Dinner, 24 November",
                "ExpiresAt": "2026-12-03T18:00:00Z",
            },
            "anyOf": precision_by_currency("Currency", "Amount"),
        }
    )

    Amount: Annotated[DecimalAmount, AmountRange(greater_than=Decimal(0), at_most=MAX_REQUEST)] = (
        Field(description="What the payer pays, in full, in `Currency` (its decimals at most).")
    )
    Currency: Annotated[BudgetCurrency, Field(strict=False)] = Field(
        description="A currency the receiving budget holds."
    )
    Description: Annotated[SafeText, Field(max_length=140)] | None = Field(
        default=None, description="Shown to the payer."
    )
    BudgetId: BudgetIdField | None = Field(
        default=None,
        description="The user's budget that receives the money. Default: the "
        "user's default budget.",
    )
    ExpiresAt: PaymentExpiry | None = Field(
        default=None,
        description="Until when the request can be paid: one minute to 90 days ahead. "
        "Default: 7 days.",
    )


class PaymentRequestResponse(ResponseModel):
    Id: str
    UserId: int
    CompanyId: int
    BudgetId: str
    Amount: DecimalAmount
    Currency: str
    Description: str | None
    Status: PaymentRequestStatus = Field(
        description="`PENDING` (payable), `PAID`, `CANCELLED` or `EXPIRED`."
    )
    Provider: BankProvider
    ExpiresAt: datetime
    PaidAt: datetime | None
    CancelledAt: datetime | None
    ExpiredAt: datetime | None
    PayerName: str | None
    TransactionId: int | None = Field(
        description="The `INCOMING_PAYMENT` transaction that credited the budget, once paid."
    )
    CreatedAt: datetime
    UpdatedAt: datetime

    @classmethod
    def of(cls, request: PaymentRequest) -> PaymentRequestResponse:
        return cls(
            Id=request.id,
            UserId=request.user_id,
            CompanyId=request.company_id,
            BudgetId=request.budget_id,
            Amount=from_minor(request.amount_minor, request.currency),
            Currency=request.currency,
            Description=request.description,
            Status=PaymentRequestStatus(request.status),
            Provider=BankProvider(request.provider),
            ExpiresAt=request.expires_at,
            PaidAt=request.paid_at,
            CancelledAt=request.cancelled_at,
            ExpiredAt=request.expired_at,
            PayerName=request.payer_name,
            TransactionId=request.transaction_id,
            CreatedAt=request.created_at,
            UpdatedAt=request.updated_at,
        )


class SandboxRequestPayment(RequestModel):
    model_config = ConfigDict(json_schema_extra={"example": {"PayerName": "Ada Lovelace"}})

    Amount: (
        Annotated[DecimalAmount, AmountRange(greater_than=Decimal(0), at_most=MAX_REQUEST)] | None
    ) = Field(
        default=None,
        description="What the payer pays; must be the requested amount (a request is paid in "
        "full or not at all). Default: the requested amount.",
    )
    PayerName: Annotated[SafeText, Field(max_length=140)] = Field(
        default="Sandbox Payer", description="Who pays."
    )


class PaymentRequestPage(Page[PaymentRequestResponse]):
    """A page of payment requests, newest first."""
