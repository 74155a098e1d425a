"""Wire schemas of MOR cards (every name prefixed `Mor`, unique in the API). The card itself,
its order, transactions and widget are the cards domain's schemas."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from finplat.cards.funding.schemas import CardCurrency, TopupValue, cents
from finplat.cards.schemas import CardOrder, CardResponse
from finplat.cards.service import CardView
from finplat.kit.fields import SafeText
from finplat.kit.money import DecimalAmount, from_minor
from finplat.kit.schemas import BodyId, RequestModel, ResponseModel
from finplat.mor.cards.load_request_states import MorLoadRequestStatus
from finplat.mor.cards.models import MorLoadRequest
from finplat.mor.cards.service import MAX_BATCH, BatchItem, Cardholder


class MorCardResponse(CardResponse):
    AssignedUserId: int | None = Field(
        default=None,
        description="The user of the company the card is assigned to now; null while it is "
        "unassigned. `UserId` is the holder it was issued to.",
    )

    @classmethod
    def of_view(cls, view: CardView, assignee: int | None) -> MorCardResponse:
        base = CardResponse.of(view.card, available=view.available, posted=view.posted)
        return cls(**base.model_dump(), AssignedUserId=assignee)


class MorCardholderResponse(ResponseModel):
    UserId: int
    ExternalUserId: str
    Email: str
    FirstName: str
    LastName: str
    Status: str
    KycStatus: str
    CardCount: int = Field(description="Cards the user is the current assignee of.")

    @classmethod
    def of(cls, holder: Cardholder) -> MorCardholderResponse:
        user = holder.user
        return cls(
            UserId=user.id,
            ExternalUserId=user.external_user_id,
            Email=user.email,
            FirstName=user.first_name,
            LastName=user.last_name,
            Status=user.status,
            KycStatus=user.kyc_status,
            CardCount=holder.cards,
        )


class MorCardholderDetail(MorCardholderResponse):
    Cards: list[MorCardResponse]


class MorCardholdersPage(ResponseModel):
    Items: list[MorCardholderResponse]
    Page: int
    PageSize: int
    HasMore: bool


class MorCardBatchRequest(RequestModel):
    Cards: list[CardOrder] = Field(
        min_length=1,
        max_length=MAX_BATCH,
        description=f"1 to {MAX_BATCH} card orders, each as `POST /api/v2/cards` takes it.",
    )


class MorCardBatchError(ResponseModel):
    Status: int
    Code: str
    Message: str


class MorCardBatchItem(ResponseModel):
    Index: int = Field(description="The order's 0-based position in `Cards`.")
    Result: Literal["CREATED", "REFUSED"]
    Card: MorCardResponse | None
    Error: MorCardBatchError | None

    @classmethod
    def of(cls, item: BatchItem, view: CardView | None) -> MorCardBatchItem:
        if view is None or item.card is None:
            refusal = item.refusal
            assert refusal is not None
            return cls(
                Index=item.index,
                Result="REFUSED",
                Card=None,
                Error=MorCardBatchError(
                    Status=refusal.status, Code=refusal.code, Message=refusal.message
                ),
            )
        return cls(
            Index=item.index,
            Result="CREATED",
            Card=MorCardResponse.of_view(view, item.card.user_id),
            Error=None,
        )


class MorCardBatchResponse(ResponseModel):
    Items: list[MorCardBatchItem]
    Created: int
    Refused: int


class MorCardAssignRequest(RequestModel):
    UserId: BodyId = Field(description="A user of the company whose base KYC is approved.")


class MorCardFundRequest(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={"example": {"Amount": 100.0, "Currency": "USD"}, **cents("Amount")}
    )

    Amount: TopupValue
    Currency: Annotated[CardCurrency, Field(strict=False)] = CardCurrency.USD


class MorCardFundResponse(ResponseModel):
    CardId: int
    FundingId: int
    Amount: DecimalAmount
    Fee: DecimalAmount
    Currency: str
    Status: str
    CreatedAt: datetime


class MorLoadRequestCreate(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {"UserId": 1, "CardId": 1, "Amount": 50.0, "Note": "Travel"},
            **cents("Amount"),
        }
    )

    UserId: BodyId = Field(description="The user asking: the card's current assignee.")
    CardId: BodyId
    Amount: TopupValue
    Currency: Annotated[CardCurrency, Field(strict=False)] = CardCurrency.USD
    Note: Annotated[SafeText, Field(min_length=1, max_length=500)] | None = None


class MorOwnLoadRequestCreate(RequestModel):
    """A signed-in simple user's load request: the user is the bearer token's."""

    model_config = ConfigDict(
        json_schema_extra={"example": {"CardId": 1, "Amount": 50.0}, **cents("Amount")}
    )

    CardId: BodyId = Field(description="One of the user's own cards (`GET .../me/cards`).")
    Amount: TopupValue
    Currency: Annotated[CardCurrency, Field(strict=False)] = CardCurrency.USD
    Note: Annotated[SafeText, Field(min_length=1, max_length=500)] | None = None


class MorLoadRequestDecline(RequestModel):
    Reason: Annotated[SafeText, Field(min_length=1, max_length=500)] | None = None


class MorLoadRequestResponse(ResponseModel):
    Id: int
    UserId: int
    CardId: int
    Amount: DecimalAmount
    Currency: str
    Note: str | None
    Status: MorLoadRequestStatus
    DeclineReason: str | None
    FailureCode: str | None = Field(description="Why the top-up was refused, when `FAILED`.")
    FundingId: int | None = Field(description="The card top-up, once `FUNDED`.")
    CreatedAt: datetime
    DecidedAt: datetime | None

    @classmethod
    def of(cls, row: MorLoadRequest) -> MorLoadRequestResponse:
        return cls(
            Id=row.id,
            UserId=row.user_id,
            CardId=row.card_id,
            Amount=from_minor(row.amount_minor, row.currency),
            Currency=row.currency,
            Note=row.note,
            Status=MorLoadRequestStatus(row.status),
            DeclineReason=row.decline_reason,
            FailureCode=row.failure_code,
            FundingId=row.funding_id,
            CreatedAt=row.created_at,
            DecidedAt=row.decided_at,
        )


class MorLoadRequestsPage(ResponseModel):
    Items: list[MorLoadRequestResponse]
    Page: int
    PageSize: int
    HasMore: bool
