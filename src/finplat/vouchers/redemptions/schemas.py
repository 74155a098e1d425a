from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import Path, Query
from pydantic import ConfigDict, Field

from finplat.kit.money import DecimalAmount, from_minor
from finplat.kit.schemas import MAX_ID, PARAMETER_ID, BodyId, RequestModel, ResponseModel
from finplat.vouchers.redemptions.models import RedemptionStatus
from finplat.vouchers.redemptions.service import Redemption, transaction_reference

UUID_PATTERN = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
RedemptionIdPath = Annotated[str, Path(pattern=UUID_PATTERN, description="The redemption's `Id`.")]

OptionalUserIdQuery = Annotated[
    int | None,
    Query(
        ge=1,
        le=MAX_ID,
        description="When given, the redemption must be this user's (404 otherwise).",
    ),
    PARAMETER_ID,
]


class RedemptionStart(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            # In lower case, as a customer may type it (and no real code's shape).
            "example": {"VoucherCode": "vch-7kq2-ab3d-9xyz-0m4n-pq8r", "UserId": 42, "CardId": 7}
        }
    )

    VoucherCode: str = Field(
        min_length=1,
        max_length=64,
        description="The voucher's code as the customer typed it (any case; dashes and spaces "
        "are ignored).",
    )
    UserId: BodyId = Field(description="The user redeeming it.")
    CardId: BodyId = Field(description="The user's card that is credited.")


class RedemptionVerify(RequestModel):
    Code: str = Field(
        min_length=1,
        max_length=16,
        examples=["000000"],
        description="The one-time code sent to the user's email (six digits).",
    )


class RedemptionResponse(ResponseModel):
    Id: str = Field(json_schema_extra={"format": "uuid"})
    VoucherId: str = Field(json_schema_extra={"format": "uuid"})
    VoucherName: str
    Amount: DecimalAmount
    Currency: str
    Status: RedemptionStatus
    TransactionReference: str | None = Field(
        description="The card top-up that credited the voucher (its `OrderId`), once `COMPLETED`."
    )
    ErrorCode: str | None = Field(description="Why the redemption `FAILED` or `EXPIRED`.")
    CreatedAt: datetime
    CompletedAt: datetime | None
    UserId: int
    CardId: int
    ExpiresAt: datetime | None = Field(
        description="While `PENDING_VERIFICATION`: verify the code before this time."
    )

    @classmethod
    def of(cls, redemption: Redemption) -> RedemptionResponse:
        row, voucher = redemption.row, redemption.voucher
        waiting = row.status == RedemptionStatus.PENDING_VERIFICATION
        return cls(
            Id=row.id,
            VoucherId=row.voucher_id,
            VoucherName=voucher.name,
            Amount=from_minor(row.amount_minor, row.currency),
            Currency=row.currency,
            Status=RedemptionStatus(row.status),
            TransactionReference=transaction_reference(row),
            ErrorCode=row.error_code,
            CreatedAt=row.created_at,
            CompletedAt=row.completed_at,
            UserId=row.user_id,
            CardId=row.card_id,
            ExpiresAt=row.expires_at if waiting else None,
        )


class RedemptionReportItem(ResponseModel):
    RedemptionId: str = Field(json_schema_extra={"format": "uuid"})
    VoucherId: str = Field(json_schema_extra={"format": "uuid"})
    VoucherName: str
    UserId: int
    Amount: DecimalAmount
    Currency: str
    Status: RedemptionStatus
    ErrorCode: str | None
    CreatedAt: datetime
    CompletedAt: datetime | None
