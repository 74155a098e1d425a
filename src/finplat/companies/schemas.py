from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import ConfigDict, Field

from finplat.companies.models import Company
from finplat.events.destinations import WEBHOOK_URL_PATTERN
from finplat.kit.schemas import RequestModel, ResponseModel
from finplat.ledger.schemas import BalanceResponse
from finplat.providers.names import BankProvider


class ConfigurationUpdate(RequestModel):
    """Fields left out are left unchanged; `WebhookUrl: null` removes the endpoint."""

    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "WebhookUrl": "https://partner.example/webhooks",
                "RotateWebhookSecret": False,
            }
        }
    )

    WebhookUrl: str | None = Field(
        default=None,
        max_length=2048,
        pattern=WEBHOOK_URL_PATTERN,
        description="http(s) URL with a DNS host name (IP literals are not accepted). Every "
        "address the name resolves to must be public; loopback names are accepted only in "
        "development.",
        json_schema_extra={"format": "uri"},
    )
    RotateWebhookSecret: bool = Field(
        default=False, description="Issue a new webhook secret; it is returned only once."
    )
    DefaultCardProvider: Annotated[BankProvider, Field(strict=False)] | None = Field(
        default=None,
        description="The card provider whose account is opened for each user once identity "
        "verification is approved (default `cardprov`). Left unchanged when omitted.",
    )


class ConfigurationResponse(ResponseModel):
    CompanyId: int
    Name: str
    IsMor: bool
    WebhookUrl: str | None
    WebhookEnabled: bool = Field(description="False when no URL is set or a 410 disabled it.")
    WebhookDisabledAt: datetime | None
    WebhookSecret: str | None = Field(
        default=None, description="Only in the response that rotated it; otherwise null."
    )
    DefaultCardProvider: BankProvider

    @classmethod
    def of(cls, company: Company, secret: str | None = None) -> ConfigurationResponse:
        return cls(
            CompanyId=company.id,
            Name=company.name,
            IsMor=company.is_mor,
            WebhookUrl=company.webhook_url,
            WebhookEnabled=bool(company.webhook_url) and company.webhook_disabled_at is None,
            WebhookDisabledAt=company.webhook_disabled_at,
            WebhookSecret=secret,
            DefaultCardProvider=BankProvider(company.default_card_provider),
        )


class CompanyBalances(ResponseModel):
    Balances: list[BalanceResponse] = Field(description="The master account, per currency.")
