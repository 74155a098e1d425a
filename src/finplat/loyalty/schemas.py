"""Wire shapes of loyalty (PascalCase, per the spec)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import Path
from pydantic import BeforeValidator, ConfigDict, Field

from finplat.cards.transactions.schemas import MID_PATTERN
from finplat.kit.fields import CountryCode, SafeText, json_integer
from finplat.kit.money import DecimalAmount, from_minor
from finplat.kit.schemas import MAX_ID, PARAMETER_ID, BodyId, RequestModel, ResponseModel
from finplat.loyalty.imports import ImportResult
from finplat.loyalty.insights import Insights, LocationStats, Metric
from finplat.loyalty.models import (
    LoyaltyAward,
    LoyaltyImportConfig,
    LoyaltyMerchant,
    LoyaltyMid,
    LoyaltyProgram,
    LoyaltyProgramStatus,
)
from finplat.loyalty.models import PointsRule as RuleKind
from finplat.loyalty.service import ProgramTerms


def _id_path(what: str) -> object:
    return Path(ge=1, le=MAX_ID, description=f"The {what}'s `Id`.")


ProgramIdPath = Annotated[int, _id_path("loyalty programme"), PARAMETER_ID]
MerchantIdPath = Annotated[int, _id_path("merchant"), PARAMETER_ID]
MidIdPath = Annotated[int, Path(ge=1, le=MAX_ID, description="The MID's `MidId`."), PARAMETER_ID]
ConfigIdPath = Annotated[int, _id_path("import configuration"), PARAMETER_ID]

NameText = Annotated[SafeText, Field(max_length=100)]
MidText = Annotated[
    str, Field(pattern=MID_PATTERN, description="An acquirer's merchant id (1-32 characters).")
]
StatusText = Annotated[LoyaltyProgramStatus, Field(strict=False)]
RuleText = Annotated[RuleKind, Field(strict=False)]
Rate = Annotated[int, Field(ge=1, le=1_000_000), BeforeValidator(json_integer)]


class ProgramCreate(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "Name": "Coffee rewards",
                "PointsRule": "PER_CURRENCY_UNIT",
                "PointsPerUnit": 2,
            }
        }
    )

    Name: NameText
    PointsRule: RuleText = Field(
        default=RuleKind.PER_CURRENCY_UNIT,
        description="`PER_CURRENCY_UNIT`: `PointsPerUnit` points per whole unit paid (rounded "
        "down); `PER_TRANSACTION`: `PointsPerTransaction` points per purchase paid.",
    )
    PointsPerUnit: Rate | None = None
    PointsPerTransaction: Rate | None = None
    Status: StatusText = LoyaltyProgramStatus.ACTIVE

    def terms(self) -> ProgramTerms:
        return ProgramTerms(
            name=self.Name,
            status=self.Status,
            points_rule=self.PointsRule,
            points_per_unit=self.PointsPerUnit,
            points_per_transaction=self.PointsPerTransaction,
        )


class ProgramUpdate(RequestModel):
    model_config = ConfigDict(json_schema_extra={"example": {"Status": "INACTIVE"}})

    Name: NameText | None = None
    Status: StatusText | None = None
    PointsRule: RuleText | None = None
    PointsPerUnit: Rate | None = None
    PointsPerTransaction: Rate | None = None

    def terms(self) -> ProgramTerms:
        return ProgramTerms(
            name=self.Name,
            status=self.Status,
            points_rule=self.PointsRule,
            points_per_unit=self.PointsPerUnit,
            points_per_transaction=self.PointsPerTransaction,
        )


class ProgramResponse(ResponseModel):
    Id: int
    Name: str
    Status: LoyaltyProgramStatus
    PointsRule: RuleKind
    PointsPerUnit: int | None
    PointsPerTransaction: int | None
    CreatedAt: datetime
    UpdatedAt: datetime

    @classmethod
    def of(cls, program: LoyaltyProgram) -> ProgramResponse:
        rule = RuleKind(program.points_rule)
        return cls(
            Id=program.id,
            Name=program.name,
            Status=LoyaltyProgramStatus(program.status),
            PointsRule=rule,
            PointsPerUnit=program.points_rate if rule is RuleKind.PER_CURRENCY_UNIT else None,
            PointsPerTransaction=program.points_rate if rule is RuleKind.PER_TRANSACTION else None,
            CreatedAt=program.created_at,
            UpdatedAt=program.updated_at,
        )


class ProgramList(ResponseModel):
    Items: list[ProgramResponse]


class MidCreate(RequestModel):
    model_config = ConfigDict(json_schema_extra={"example": {"Mid": "000123456789012"}})

    Mid: MidText


class MidResponse(ResponseModel):
    MidId: int
    MerchantId: int
    Mid: str
    CreatedAt: datetime

    @classmethod
    def of(cls, mid: LoyaltyMid) -> MidResponse:
        return cls(MidId=mid.id, MerchantId=mid.merchant_id, Mid=mid.mid, CreatedAt=mid.created_at)


class MidList(ResponseModel):
    Items: list[MidResponse]


class MerchantCreate(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "Name": "Coffee Shop Soho",
                "ProgramId": 1,
                "City": "London",
                "Country": "GB",
                "Mids": ["000123456789012"],
            }
        }
    )

    Name: NameText
    ProgramId: BodyId = Field(description="The loyalty programme its purchases earn under.")
    City: NameText | None = None
    Country: CountryCode | None = None
    Mids: Annotated[list[MidText], Field(max_length=100)] = Field(default_factory=list)


class MerchantResponse(ResponseModel):
    Id: int
    ProgramId: int
    Name: str
    City: str | None
    Country: str | None
    Mids: list[MidResponse]
    CreatedAt: datetime

    @classmethod
    def of(cls, merchant: LoyaltyMerchant, mids: list[LoyaltyMid]) -> MerchantResponse:
        return cls(
            Id=merchant.id,
            ProgramId=merchant.program_id,
            Name=merchant.name,
            City=merchant.city,
            Country=merchant.country,
            Mids=[MidResponse.of(m) for m in mids],
            CreatedAt=merchant.created_at,
        )


class MerchantList(ResponseModel):
    Items: list[MerchantResponse]


class ProgramPoints(ResponseModel):
    ProgramId: int
    Points: int


class PointsBalance(ResponseModel):
    UserId: int
    Points: int = Field(description="Across every programme.")
    Programs: list[ProgramPoints]


class LocationStatsResponse(ResponseModel):
    MerchantId: int
    Name: str
    City: str | None
    Country: str | None
    Transactions: int = Field(description="Matched or imported transactions with money paid.")
    Users: int = Field(description="Distinct users who made them.")
    Points: int = Field(description="Points they earn now.")
    Value: int = Field(description="The value of the requested `Metric`, the ranking's key.")

    @classmethod
    def of(cls, stats: LocationStats, metric: Metric) -> LocationStatsResponse:
        return cls(
            MerchantId=stats.merchant.id,
            Name=stats.merchant.name,
            City=stats.merchant.city,
            Country=stats.merchant.country,
            Transactions=stats.transactions,
            Users=stats.users,
            Points=stats.points,
            Value=stats.value(metric),
        )


class LocationInsightsResponse(ResponseModel):
    TopLocations: list[LocationStatsResponse]
    Period: str
    Metric: str
    GeneratedAt: datetime

    @classmethod
    def of(cls, insights: Insights) -> LocationInsightsResponse:
        return cls(
            TopLocations=[LocationStatsResponse.of(s, insights.metric) for s in insights.top],
            Period=insights.period.value,
            Metric=insights.metric.value,
            GeneratedAt=insights.generated_at,
        )


class ImportConfigCreate(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={"example": {"Name": "Point of sale history", "ProgramId": 1}}
    )

    Name: NameText
    ProgramId: BodyId = Field(description="The programme imported transactions earn under.")
    Delimiter: Literal[",", ";", "\t", "|"] = Field(
        default=",", description="The file's cell delimiter."
    )


class ImportConfigResponse(ResponseModel):
    Id: int
    ProgramId: int
    Name: str
    Delimiter: str
    Columns: list[str] = Field(description="The columns a file must name in its header line.")
    CreatedAt: datetime

    @classmethod
    def of(cls, config: LoyaltyImportConfig, columns: tuple[str, ...]) -> ImportConfigResponse:
        return cls(
            Id=config.id,
            ProgramId=config.program_id,
            Name=config.name,
            Delimiter=config.delimiter,
            Columns=list(columns),
            CreatedAt=config.created_at,
        )


class ImportConfigList(ResponseModel):
    Items: list[ImportConfigResponse]


class ImportUploadForm(RequestModel):
    """The upload's text fields: none (the one part is the `File`)."""


class ImportResultResponse(ResponseModel):
    ConfigId: int
    ProgramId: int
    Rows: int = Field(description="Distinct transactions in the file.")
    Imported: int = Field(description="Transactions imported now.")
    Unchanged: int = Field(description="Transactions imported before, left as they are.")
    Points: int = Field(description="Points the transactions imported now earned.")

    @classmethod
    def of(cls, result: ImportResult) -> ImportResultResponse:
        return cls(
            ConfigId=result.config_id,
            ProgramId=result.program_id,
            Rows=result.rows,
            Imported=result.imported,
            Unchanged=result.unchanged,
            Points=result.points,
        )


class CardTransactionAssign(RequestModel):
    model_config = ConfigDict(json_schema_extra={"example": {"CardTransactionId": 1}})

    CardTransactionId: BodyId = Field(description="The card purchase (`/card-transactions`).")
    ProgramId: BodyId | None = Field(
        default=None,
        description="The programme; without it, the programme of the merchant whose MID the "
        "purchase carries.",
    )


class AwardResponse(ResponseModel):
    Id: int
    ProgramId: int
    MerchantId: int | None
    UserId: int
    Source: str
    CardTransactionId: int | None
    Mid: str | None
    Currency: str
    PaidAmount: DecimalAmount = Field(description="Cleared less refunded: what earns points.")
    Points: int
    OccurredAt: datetime

    @classmethod
    def of(cls, award: LoyaltyAward) -> AwardResponse:
        return cls(
            Id=award.id,
            ProgramId=award.program_id,
            MerchantId=award.merchant_id,
            UserId=award.user_id,
            Source=award.source,
            CardTransactionId=award.card_transaction_id,
            Mid=award.mid,
            Currency=award.currency,
            PaidAmount=from_minor(award.paid_minor, award.currency),
            Points=award.points,
            OccurredAt=award.occurred_at,
        )
