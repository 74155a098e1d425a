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
from finplat.kit.schemas import BodyId, RequestModel, ResponseModel
from finplat.payments.mandates.models import MandateFrequencyV2, MandateStatusV2, PaymentMandate
from finplat.payments.mandates.service import MANDATE_ID_PATTERN
from finplat.payments.schemas import MandateEndDate, MandateStartDate
from finplat.providers.names import BankProvider

MAX_MANDATE = Decimal("1000000")

MandateIdPath = Annotated[
    str, Path(pattern=MANDATE_ID_PATTERN, description="The mandate's `Id` the service returned.")
]
MandateIdField = Annotated[
    str, Field(pattern=MANDATE_ID_PATTERN, description="The mandate's `Id` the service returned.")
]
MandateStatusQuery = Annotated[
    MandateStatusV2 | None, Query(alias="status", description="Only mandates in this state.")
]


def amount_text(minor: int, currency: str) -> str:
    """An amount as the spec's string, with the currency's decimals ("100.00")."""
    return f"{from_minor(minor, currency)}"


class MandateCreate(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "UserId": 42,
                "MaxAmount": "100.00",
                "Currency": "EUR",
                "Frequency": "MONTHLY",
                "Description": "Gym membership",
                "ExternalReferenceId": "sub-2291",
            },
            "anyOf": precision_by_currency("Currency", "MaxAmount"),
        }
    )

    UserId: BodyId = Field(description="The user who authorises the collections.")
    MaxAmount: Annotated[
        DecimalAmount, AmountRange(greater_than=Decimal(0), at_most=MAX_MANDATE)
    ] = Field(
        description="The most collected per period of `Frequency` (one-time: in total, in one "
        "collection)."
    )
    Currency: Annotated[BudgetCurrency, Field(strict=False)]
    Frequency: Annotated[MandateFrequencyV2, Field(strict=False)] = Field(
        description="`ONE_TIME`, `WEEKLY` (ISO weeks), `MONTHLY` or `YEARLY` (calendar, UTC)."
    )
    Description: Annotated[SafeText, Field(max_length=140)] | None = None
    ExternalReferenceId: Annotated[SafeText, Field(max_length=64)] | None = Field(
        default=None, description="Your own reference for the mandate."
    )
    StartDate: MandateStartDate | None = Field(default=None, description="Default: today (UTC).")
    EndDate: MandateEndDate | None = Field(default=None, description="Default: none.")
    BudgetId: BudgetIdField | None = Field(
        default=None, description="The budget collected from. Default: the user's default budget."
    )


class MandateResponse(ResponseModel):
    Id: str
    UserId: int
    CompanyId: int
    MaxAmount: str = Field(description='A decimal string, e.g. "100.00".')
    Currency: str
    Frequency: MandateFrequencyV2
    Status: MandateStatusV2 = Field(
        description="`PENDING` until the banking provider reports the authorisation, then "
        "`ACTIVE` or `FAILED`; `CANCELLED`; `EXPIRED` after `EndDate`."
    )
    Description: str | None
    ExternalReferenceId: str | None
    StartDate: str
    EndDate: str | None
    RemainingThisPeriod: str = Field(
        description="What can still be collected in the current period (0 unless `ACTIVE`)."
    )
    BudgetId: str
    Provider: BankProvider
    FailureReason: str | None
    CreatedAt: datetime
    UpdatedAt: datetime

    @classmethod
    def of(cls, mandate: PaymentMandate, remaining_minor: int) -> MandateResponse:
        return cls(
            Id=mandate.id,
            UserId=mandate.user_id,
            CompanyId=mandate.company_id,
            MaxAmount=amount_text(mandate.max_amount_minor, mandate.currency),
            Currency=mandate.currency,
            Frequency=MandateFrequencyV2(mandate.frequency),
            Status=MandateStatusV2(mandate.status),
            Description=mandate.description,
            ExternalReferenceId=mandate.external_reference_id,
            StartDate=mandate.start_date.isoformat(),
            EndDate=mandate.end_date.isoformat() if mandate.end_date else None,
            RemainingThisPeriod=amount_text(remaining_minor, mandate.currency),
            BudgetId=mandate.budget_id,
            Provider=BankProvider(mandate.provider),
            FailureReason=mandate.failure_reason,
            CreatedAt=mandate.created_at,
            UpdatedAt=mandate.updated_at,
        )


class MandatePage(Page[MandateResponse]):
    """A page of mandates, newest first."""


class SandboxMandateDecision(RequestModel):
    model_config = ConfigDict(json_schema_extra={"example": {"Outcome": "APPROVED"}})

    Outcome: Annotated[str, Field(pattern=r"^(APPROVED|REFUSED)$")] = Field(
        description="`APPROVED` activates the mandate; `REFUSED` fails it."
    )
