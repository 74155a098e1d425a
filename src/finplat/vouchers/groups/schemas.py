from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated

from pydantic import BeforeValidator, ConfigDict, Field

from finplat.kit.fields import SafeText, json_integer
from finplat.kit.money import (
    CURRENCY_CODES,
    AmountRange,
    DecimalAmount,
    from_minor,
    precision_by_currency,
)
from finplat.kit.schemas import RequestModel, ResponseModel
from finplat.vouchers.groups.service import GroupDraft, Terms, VoucherType
from finplat.vouchers.instants import Instant
from finplat.vouchers.models import VoucherGroup

MAX_VALUE = Decimal("1000000")
MAX_BATCH = 10000

# Bounds before the validator, so the document states them (minimum/maximum).
Limit = Annotated[int, Field(ge=1, le=1_000_000_000), BeforeValidator(json_integer)]
Amount = Annotated[DecimalAmount, AmountRange(greater_than=Decimal(0), at_most=MAX_VALUE)]
CurrencyCode = Annotated[
    str,
    Field(
        description="ISO 4217 code, or USDC / USDT.",
        examples=["USD"],
        json_schema_extra={"enum": list(CURRENCY_CODES)},
    ),
]
NameText = Annotated[SafeText, Field(max_length=200)]
DescriptionText = Annotated[SafeText, Field(max_length=1000)]
Label = Annotated[SafeText, Field(max_length=100)]
Tag = Annotated[SafeText, Field(max_length=50)]
TypeField = Annotated[VoucherType, Field(strict=False)]


class VoucherGroupCreate(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "Name": "Winter campaign",
                "DefaultValue": 25,
                "DefaultCurrency": "USD",
                "DefaultTotalUseLimit": 1,
                "Tags": ["winter"],
            },
            # The decimals each amount may have depend on the currency.
            "allOf": [
                {"anyOf": precision_by_currency("DefaultCurrency", "DefaultValue")},
                {"anyOf": precision_by_currency("DefaultCurrency", "DefaultAggregateCap")},
            ],
        }
    )

    Name: NameText
    Description: DescriptionText | None = None
    DefaultType: TypeField | None = Field(
        default=None, description="`FIXED_AMOUNT` (the default): credits `Value` to the card."
    )
    DefaultValue: Amount | None = Field(
        default=None,
        description="In `DefaultCurrency`, which it needs (400 `INVALID_VOUCHER_TERMS` "
        "without it).",
    )
    DefaultCurrency: CurrencyCode | None = None
    DefaultPerUserLimit: Limit | None = Field(
        default=None, description="Redemptions per user of each voucher; none: no limit."
    )
    DefaultTotalUseLimit: Limit | None = Field(
        default=None, description="Redemptions of each voucher; none: no limit."
    )
    DefaultAggregateCap: Amount | None = Field(
        default=None,
        description="The most each voucher may redeem in all, in `DefaultCurrency` (which it "
        "needs); none: no cap.",
    )
    DefaultRequiresApproval: bool | None = Field(
        default=None,
        description="Redemptions wait for the company's approval. Default: the settings' "
        "`DefaultRequiresApproval`.",
    )
    DefaultRequiresEmail2Fa: bool | None = Field(
        default=None,
        description="Redemptions are confirmed with a one-time code sent to the user's email "
        "(default true); without it a redemption completes when it starts.",
    )
    DefaultValidFrom: Instant | None = None
    DefaultValidUntil: Instant | None = Field(
        default=None, description="After `DefaultValidFrom` (400 otherwise)."
    )
    CampaignReference: Label | None = None
    CostCentre: Label | None = None
    Tags: Annotated[list[Tag], Field(max_length=20)] | None = None

    def draft(self) -> GroupDraft:
        return GroupDraft(
            name=self.Name,
            terms=Terms(
                description=self.Description,
                type=self.DefaultType or VoucherType.FIXED_AMOUNT,
                value=self.DefaultValue,
                currency=self.DefaultCurrency,
                per_user_limit=self.DefaultPerUserLimit,
                total_use_limit=self.DefaultTotalUseLimit,
                aggregate_cap=self.DefaultAggregateCap,
                requires_approval=self.DefaultRequiresApproval,
                requires_email_2fa=self.DefaultRequiresEmail2Fa,
                valid_from=self.DefaultValidFrom,
                valid_until=self.DefaultValidUntil,
            ),
            campaign_reference=self.CampaignReference,
            cost_centre=self.CostCentre,
            tags=tuple(self.Tags or ()),
        )


class VoucherGroupResponse(ResponseModel):
    Id: str = Field(json_schema_extra={"format": "uuid"})
    Name: str
    Description: str | None
    DefaultType: str
    DefaultValue: DecimalAmount | None
    DefaultCurrency: str | None
    DefaultPerUserLimit: int | None
    DefaultTotalUseLimit: int | None
    DefaultAggregateCap: DecimalAmount | None
    DefaultRequiresApproval: bool
    DefaultRequiresEmail2Fa: bool
    DefaultValidFrom: datetime | None
    DefaultValidUntil: datetime | None
    CampaignReference: str | None
    CostCentre: str | None
    Tags: list[str]
    Status: str = Field(examples=["ACTIVE"])
    CreatedAt: datetime

    @classmethod
    def of(cls, group: VoucherGroup) -> VoucherGroupResponse:
        currency = group.default_currency

        def amount(minor: int | None) -> Decimal | None:
            return from_minor(minor, currency) if minor is not None and currency else None

        return cls(
            Id=group.id,
            Name=group.name,
            Description=group.description,
            DefaultType=group.default_type,
            DefaultValue=amount(group.default_value_minor),
            DefaultCurrency=currency,
            DefaultPerUserLimit=group.default_per_user_limit,
            DefaultTotalUseLimit=group.default_total_use_limit,
            DefaultAggregateCap=amount(group.default_aggregate_cap_minor),
            DefaultRequiresApproval=group.default_requires_approval,
            DefaultRequiresEmail2Fa=group.default_requires_email_2fa,
            DefaultValidFrom=group.default_valid_from,
            DefaultValidUntil=group.default_valid_until,
            CampaignReference=group.campaign_reference,
            CostCentre=group.cost_centre,
            Tags=list(group.tags or []),
            Status=group.status,
            CreatedAt=group.created_at,
        )


# The issue request's overrides, by wire name, and the `Terms` field each sets.
OVERRIDES = {
    "Name": "name",
    "Description": "description",
    "Type": "type",
    "Value": "value",
    "Currency": "currency",
    "PerUserLimit": "per_user_limit",
    "MaximumTotalUses": "total_use_limit",
    "MaximumAggregateValue": "aggregate_cap",
    "RequiresWhitelabelApproval": "requires_approval",
    "RequiresEmail2Fa": "requires_email_2fa",
    "ValidFrom": "valid_from",
    "ValidUntil": "valid_until",
}


class VoucherIssue(RequestModel):
    """`Count` vouchers with the group's defaults; each field sent here replaces the group's
    (`null` for a limit: no limit)."""

    model_config = ConfigDict(
        json_schema_extra={
            "example": {"Count": 3, "Value": 25, "Currency": "USD"},
            "allOf": [
                {"anyOf": precision_by_currency("Currency", "Value")},
                {"anyOf": precision_by_currency("Currency", "MaximumAggregateValue")},
            ],
        }
    )

    Count: Annotated[int, Field(ge=1, le=MAX_BATCH), BeforeValidator(json_integer)] = Field(
        default=1,
        description="How many vouchers (default 1); at most the settings' `MaximumBatchSize`.",
    )
    Value: Amount | None = Field(default=None, description="Default: the group's.")
    Currency: CurrencyCode | None = Field(default=None, description="Default: the group's.")
    Name: NameText | None = None
    Description: DescriptionText | None = None
    Type: TypeField | None = None
    PerUserLimit: Limit | None = None
    MaximumTotalUses: Limit | None = None
    MaximumAggregateValue: Amount | None = Field(
        default=None, description="At least `Value` (400 otherwise)."
    )
    RequiresWhitelabelApproval: bool | None = None
    RequiresEmail2Fa: bool | None = None
    ValidFrom: Instant | None = None
    ValidUntil: Instant | None = Field(default=None, description="After `ValidFrom`.")

    def overrides(self) -> tuple[Terms, frozenset[str]]:
        sent = {
            OVERRIDES[name]: getattr(self, name)
            for name in self.model_fields_set
            if name in OVERRIDES
        }
        for flag in ("type", "requires_approval", "requires_email_2fa"):
            if flag in sent and sent[flag] is None:
                del sent[flag]  # null: the group's
        return Terms(**sent), frozenset(sent)
