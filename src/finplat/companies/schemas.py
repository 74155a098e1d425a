from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import ConfigDict, Field

from finplat.companies.models import Company
from finplat.events.destinations import WEBHOOK_URL_PATTERN
from finplat.kit.schemas import RequestModel, ResponseModel
from finplat.ledger.schemas import BalanceResponse
from finplat.partner_hosted.configuration import (
    DEFAULT_TIMEOUT_MS,
    MAX_TIMEOUT_MS,
    PartnerHostedChange,
)
from finplat.partner_hosted.configuration import (
    FallbackDecision as Fallback,
)
from finplat.partner_hosted.models import PartnerHostedConfig
from finplat.providers.names import BankProvider


class PartnerHostedSettings(RequestModel):
    """Partner-hosted balances: the partner keeps the users' balances and decides their card
    purchases (`POST {BaseUrl}/authorizations`); finplat calls it with `ApiKey` as
    `X-API-Key` and signs each body with the webhook secret (`X-Service-Signature`)."""

    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "BaseUrl": "https://partner.example/finplat",
                "ApiKey": "pk_live_...",
                "TimeoutMs": 1500,
                "FallbackDecision": "DECLINE",
            }
        }
    )

    BaseUrl: str = Field(
        max_length=2048,
        pattern=WEBHOOK_URL_PATTERN,
        description="http(s) URL with a DNS host name, public addresses only (loopback in "
        "development); the six partner endpoints are under it.",
        json_schema_extra={"format": "uri"},
    )
    ApiKey: str | None = Field(
        default=None,
        min_length=8,
        max_length=512,
        pattern=r"^[\x21-\x7e]+$",
        description="The key the partner issued to finplat. Stored encrypted and never "
        "returned (`ApiKeyLast4` tells keys apart). Required the first time; left out, the "
        "stored key is kept.",
    )
    TimeoutMs: int = Field(
        default=DEFAULT_TIMEOUT_MS,
        ge=100,
        le=MAX_TIMEOUT_MS,
        description="How long an authorization waits for the partner (at most 2000 ms).",
    )
    FallbackDecision: Annotated[Fallback, Field(strict=False)] = Field(
        default=Fallback.DECLINE,
        description="The decision when the partner is late, answers 5xx or cannot be reached "
        "(default `DECLINE`).",
    )

    def change(self) -> PartnerHostedChange:
        return PartnerHostedChange(
            base_url=self.BaseUrl,
            api_key=self.ApiKey,
            timeout_ms=self.TimeoutMs,
            fallback_decision=self.FallbackDecision,
        )


class PartnerHostedView(ResponseModel):
    BaseUrl: str
    ApiKeyLast4: str = Field(description="The last four characters of the stored key.")
    TimeoutMs: int
    FallbackDecision: Fallback

    @classmethod
    def of(cls, config: PartnerHostedConfig) -> PartnerHostedView:
        return cls(
            BaseUrl=config.base_url,
            ApiKeyLast4=config.api_key_last4,
            TimeoutMs=config.timeout_ms,
            FallbackDecision=Fallback(config.fallback_decision),
        )


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
    PartnerHosted: PartnerHostedSettings | None = Field(
        default=None,
        description="Keep the users' balances at the partner (dual balance); `null` turns it "
        "off. Left unchanged when omitted.",
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
    PartnerHosted: PartnerHostedView | None = Field(
        default=None, description="Set when the users' balances are kept at the partner."
    )

    @classmethod
    def of(
        cls,
        company: Company,
        secret: str | None = None,
        partner_hosted: PartnerHostedConfig | None = None,
    ) -> ConfigurationResponse:
        return cls(
            CompanyId=company.id,
            Name=company.name,
            IsMor=company.is_mor,
            WebhookUrl=company.webhook_url,
            WebhookEnabled=bool(company.webhook_url) and company.webhook_disabled_at is None,
            WebhookDisabledAt=company.webhook_disabled_at,
            WebhookSecret=secret,
            DefaultCardProvider=BankProvider(company.default_card_provider),
            PartnerHosted=None if partner_hosted is None else PartnerHostedView.of(partner_hosted),
        )


class CompanyBalances(ResponseModel):
    Balances: list[BalanceResponse] = Field(description="The master account, per currency.")
