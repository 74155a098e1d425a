"""Wire format of child companies and their fundings."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated

from pydantic import ConfigDict, Field

from finplat.companies.models import Company
from finplat.kit.fields import SafeText
from finplat.kit.money import (
    CURRENCY_CODES,
    AmountRange,
    DecimalAmount,
    from_minor,
    precision_by_currency,
)
from finplat.kit.schemas import RequestModel, ResponseModel
from finplat.mor.children.models import MorChildFunding

MAX_CHILD_FUNDING = Decimal("1000000000")  # per request, in major units (as company funding)


class MorChildCreateRequest(RequestModel):
    model_config = ConfigDict(json_schema_extra={"example": {"Name": "Acme Retail EU"}})

    Name: Annotated[SafeText, Field(max_length=200)] = Field(
        description="The child company's name: 1 to 200 characters, one line, without leading "
        "or trailing spaces."
    )


class MorChild(ResponseModel):
    Id: int = Field(description="The child's company id (`childId`).")
    Name: str
    IsMor: bool
    ParentCompanyId: int
    CreatedAt: datetime

    @classmethod
    def of(cls, company: Company) -> MorChild:
        assert company.parent_company_id is not None
        return cls(
            Id=company.id,
            Name=company.name,
            IsMor=company.is_mor,
            ParentCompanyId=company.parent_company_id,
            CreatedAt=company.created_at,
        )


class MorChildCreated(MorChild):
    ApiKey: str | None = Field(
        description="The child's first API key: in this response only (a replay with the same "
        "`Idempotency-Key` answers null). finplat keeps only its hash."
    )
    WebhookSecret: str | None = Field(
        description="The child's webhook secret: in this response only (null in a replay)."
    )


class MorChildPage(ResponseModel):
    Items: list[MorChild]
    Page: int
    PageSize: int
    HasMore: bool


class MorChildFundingRequest(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {"Amount": 1500.00, "Currency": "USD"},
            "anyOf": precision_by_currency("Currency", "Amount"),
        }
    )

    Amount: Annotated[
        DecimalAmount, AmountRange(greater_than=Decimal(0), at_most=MAX_CHILD_FUNDING)
    ] = Field(description="Major units with at most the currency's decimals.")
    Currency: str = Field(
        description="ISO 4217 code, or USDC / USDT: the wallet debited and credited.",
        examples=["USD"],
        json_schema_extra={"enum": list(CURRENCY_CODES)},
    )


class MorChildFundingResponse(ResponseModel):
    Id: int
    ChildCompanyId: int
    Currency: str
    Amount: DecimalAmount
    Status: str = Field(examples=["COMPLETED"], description="Always `COMPLETED`: it is atomic.")
    CreatedAt: datetime

    @classmethod
    def of(cls, funding: MorChildFunding) -> MorChildFundingResponse:
        return cls(
            Id=funding.id,
            ChildCompanyId=funding.child_company_id,
            Currency=funding.currency,
            Amount=from_minor(funding.amount_minor, funding.currency),
            Status="COMPLETED",
            CreatedAt=funding.created_at,
        )


class MorChildFundingPage(ResponseModel):
    Items: list[MorChildFundingResponse]
    Page: int
    PageSize: int
    HasMore: bool
