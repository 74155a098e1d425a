from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import Query
from pydantic import Field

from finplat.kit.clock import utcnow
from finplat.kit.money import DecimalAmount, from_minor
from finplat.kit.schemas import ResponseModel
from finplat.vouchers.models import Voucher
from finplat.vouchers.status import VoucherStatus, reported

GroupIdQuery = Annotated[
    str | None,
    Query(
        alias="groupId",
        pattern=r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
        description="Only this group's vouchers.",
    ),
]


class VoucherResponse(ResponseModel):
    Id: str = Field(json_schema_extra={"format": "uuid"})
    GroupId: str = Field(json_schema_extra={"format": "uuid"})
    Name: str
    Description: str | None
    MaskedCode: str = Field(examples=["VCH-****-****-****-****-7KQ2"])
    Type: str = Field(examples=["FIXED_AMOUNT"])
    Value: DecimalAmount
    Currency: str
    Status: VoucherStatus
    SuccessfulUses: int
    ReservedUses: int = Field(description="Uses held by redemptions started and not finished.")
    PerUserLimit: int | None = Field(description="None: no limit.")
    MaximumTotalUses: int | None = Field(description="None: no limit.")
    RedeemedValue: DecimalAmount
    ReservedValue: DecimalAmount
    MaximumAggregateValue: DecimalAmount | None = Field(description="None: no cap.")
    RequiresWhitelabelApproval: bool
    RequiresEmail2Fa: bool
    ValidFrom: datetime | None
    ValidUntil: datetime | None
    CreatedAt: datetime

    @classmethod
    def of(cls, voucher: Voucher) -> VoucherResponse:
        currency = voucher.currency
        cap = voucher.maximum_aggregate_value_minor
        return cls(
            Id=voucher.id,
            GroupId=voucher.group_id,
            Name=voucher.name,
            Description=voucher.description,
            MaskedCode=voucher.masked_code,
            Type=voucher.type,
            Value=from_minor(voucher.value_minor, currency),
            Currency=currency,
            Status=reported(voucher, utcnow()),
            SuccessfulUses=voucher.successful_uses,
            ReservedUses=voucher.reserved_uses,
            PerUserLimit=voucher.per_user_limit,
            MaximumTotalUses=voucher.maximum_total_uses,
            RedeemedValue=from_minor(voucher.redeemed_value_minor, currency),
            ReservedValue=from_minor(voucher.reserved_value_minor, currency),
            MaximumAggregateValue=from_minor(cap, currency) if cap is not None else None,
            RequiresWhitelabelApproval=voucher.requires_whitelabel_approval,
            RequiresEmail2Fa=voucher.requires_email_2fa,
            ValidFrom=voucher.valid_from,
            ValidUntil=voucher.valid_until,
            CreatedAt=voucher.created_at,
        )


class IssuedVoucher(VoucherResponse):
    PlaintextCode: str | None = Field(
        description="The voucher's code: in this response only, never again (a replay of the "
        "request answers null). Give it to the customer now.",
    )


class IssuedVouchers(ResponseModel):
    GroupId: str = Field(json_schema_extra={"format": "uuid"})
    Count: int
    Vouchers: list[IssuedVoucher]


class VoucherPage(ResponseModel):
    Items: list[VoucherResponse]
    Page: int
    PageSize: int
    HasMore: bool
