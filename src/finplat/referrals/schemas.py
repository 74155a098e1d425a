"""Wire shapes of the referral programme (PascalCase, as the spec's resources)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any

from fastapi import Query
from pydantic import BeforeValidator, ConfigDict, Field, WithJsonSchema

from finplat.kit.clock import utcnow
from finplat.kit.fields import SafeText, json_integer
from finplat.kit.money import CURRENCY_CODES, AmountRange, DecimalAmount, from_minor
from finplat.kit.schemas import RequestModel, ResponseModel
from finplat.referrals.boosts import BoostKind, reported
from finplat.referrals.levels import CommissionBasis as Basis
from finplat.referrals.levels import Level
from finplat.referrals.levels import LevelBasis as Ladder
from finplat.referrals.models import (
    ReferralBoost,
    ReferralCommunityMember,
    ReferralLevelChange,
    ReferralProgram,
    ReferralRelationship,
    ReferralReward,
)
from finplat.vouchers.instants import Instant

UUID_PATTERN = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
PROVIDER = "finplat"  # the platform runs the programme itself: no provider is involved
MAX_REWARD = Decimal("1000000")


# Named so the fuzz hooks draw future instants: a membership that expired already is refused.
MEMBERSHIP_EXPIRY_FORMAT = "membership-expiry"
MembershipExpiry = Annotated[
    Instant,
    WithJsonSchema(
        {
            "type": "string",
            "format": MEMBERSHIP_EXPIRY_FORMAT,
            "description": "A date-time with its offset, in the future (400 otherwise).",
            "examples": ["2027-12-01T00:00:00Z"],
        }
    ),
]


class ProgramStatus(StrEnum):
    ACTIVE = "ACTIVE"
    PAUSED = "PAUSED"  # nothing new accrues; what accrued is released and paid as before


class Delivery(StrEnum):
    CARD_CREDIT = "CARD_CREDIT"
    VOUCHER = "VOUCHER"  # an assigned voucher the beneficiary redeems onto their card


Months = Annotated[int, Field(ge=1, le=120), BeforeValidator(json_integer)]
Days = Annotated[int, Field(ge=0, le=365), BeforeValidator(json_integer)]
Bps = Annotated[int, Field(ge=0, le=10_000), BeforeValidator(json_integer)]
Reward = Annotated[DecimalAmount, AmountRange(at_least=Decimal(0), at_most=MAX_REWARD)]
ThresholdAmount = Annotated[
    DecimalAmount, AmountRange(at_least=Decimal(0), at_most=Decimal(1_000_000_000))
]
LevelCode = Annotated[str, Field(pattern=r"^[A-Z0-9_]{1,32}$", examples=["GOLD"])]
CurrencyCode = Annotated[
    str,
    Field(
        description="ISO 4217 code, or USDC / USDT.",
        examples=["USD"],
        json_schema_extra={"enum": list(CURRENCY_CODES)},
    ),
]


class ReferralLevelRequest(RequestModel):
    Code: LevelCode
    Name: Annotated[SafeText, Field(min_length=1, max_length=100)]
    Threshold: ThresholdAmount = Field(
        description="What the referrer must reach to be at this level, counted by the "
        "programme's `LevelBasis`: qualified friends (a whole number) or their qualifying "
        "top-up volume in `PayoutCurrency`. The first level's is 0."
    )
    CommissionBasis: Annotated[Basis, Field(strict=False)] = Field(
        description="What a friend's top-up commission is a share of: the top-up's `FEE` "
        "or its `VOLUME` (amount)."
    )
    CommissionBps: Bps = Field(description="The referrer's share in basis points (1/100 %).")
    WelcomeReward: Reward | None = Field(
        default=None, description="Paid to the friend once approved (KYC); none: 0."
    )
    QualificationReward: Reward | None = Field(
        default=None,
        description="Paid to the referrer on the friend's first qualifying top-up.",
    )


class ReferralProgramConfiguration(RequestModel):
    """The company's referral programme, as a whole: each PUT replaces it."""

    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "LevelBasis": "QUALIFIED_REFERRALS",
                "PayoutCurrency": "USD",
                "HoldDays": 14,
                "Levels": [
                    {
                        "Code": "BRONZE",
                        "Name": "Bronze",
                        "Threshold": 0,
                        "CommissionBasis": "FEE",
                        "CommissionBps": 1000,
                        "WelcomeReward": 5,
                        "QualificationReward": 10,
                    },
                    {
                        "Code": "GOLD",
                        "Name": "Gold",
                        "Threshold": 5,
                        "CommissionBasis": "VOLUME",
                        "CommissionBps": 50,
                        "QualificationReward": 20,
                    },
                ],
            }
        }
    )

    Status: Annotated[ProgramStatus, Field(strict=False)] = ProgramStatus.ACTIVE
    LevelBasis: Annotated[Ladder, Field(strict=False)]
    LevelLookbackMonths: Months = 12
    CommissionEligibilityMonths: Months = Field(
        default=12,
        description="Top-ups of a friend earn commission for this many months after the "
        "friend was referred.",
    )
    DeliveryMode: Annotated[Delivery, Field(strict=False)] = Delivery.CARD_CREDIT
    PayoutCurrency: CurrencyCode
    VoucherClaimDays: Annotated[int, Field(ge=1, le=365), BeforeValidator(json_integer)] = 30
    HoldDays: Days = Field(
        default=14,
        description="Days a reward is held before it can be paid; a top-up unloaded within "
        "them cancels the rewards it gave.",
    )
    QualifyingTopupMinimum: Reward | None = Field(
        default=None,
        description="The smallest top-up (in `PayoutCurrency`) that qualifies a friend; "
        "none: any top-up.",
    )
    Levels: Annotated[list[ReferralLevelRequest], Field(min_length=1, max_length=20)]
    ExpectedRevision: Annotated[int, Field(ge=0), BeforeValidator(json_integer)] | None = Field(
        default=None,
        description="When sent, the change is made only if the programme is still at this "
        "`Revision` (409 `STALE_PROGRAM_REVISION` otherwise).",
    )


class ReferralLevelResponse(ResponseModel):
    Code: str
    Name: str
    Threshold: DecimalAmount
    CommissionBasis: str
    CommissionBps: int
    WelcomeReward: DecimalAmount
    QualificationReward: DecimalAmount

    @classmethod
    def of(cls, level: Level, program: ReferralProgram) -> ReferralLevelResponse:
        currency = program.payout_currency
        threshold = (
            Decimal(level.threshold)
            if program.level_basis == Ladder.QUALIFIED_REFERRALS
            else from_minor(level.threshold, currency)
        )
        return cls(
            Code=level.code,
            Name=level.name,
            Threshold=threshold,
            CommissionBasis=level.commission_basis.value,
            CommissionBps=level.commission_bps,
            WelcomeReward=from_minor(level.welcome_minor, currency),
            QualificationReward=from_minor(level.qualification_minor, currency),
        )


class ReferralProgramResponse(ResponseModel):
    Exists: bool
    Id: str | None = Field(json_schema_extra={"format": "uuid"})
    Provider: str | None
    Status: str | None
    Revision: int | None = Field(description="Grows by one on every change of the programme.")
    LevelBasis: str | None
    LevelLookbackMonths: int | None
    CommissionEligibilityMonths: int | None
    DeliveryMode: str | None
    PayoutCurrency: str | None
    VoucherClaimDays: int | None
    HoldDays: int | None
    QualifyingTopupMinimum: DecimalAmount | None
    Levels: list[ReferralLevelResponse]
    CreatedAt: datetime | None
    UpdatedAt: datetime | None

    @classmethod
    def none(cls) -> ReferralProgramResponse:
        return cls(
            Exists=False,
            Id=None,
            Provider=None,
            Status=None,
            Revision=None,
            LevelBasis=None,
            LevelLookbackMonths=None,
            CommissionEligibilityMonths=None,
            DeliveryMode=None,
            PayoutCurrency=None,
            VoucherClaimDays=None,
            HoldDays=None,
            QualifyingTopupMinimum=None,
            Levels=[],
            CreatedAt=None,
            UpdatedAt=None,
        )

    @classmethod
    def of(cls, program: ReferralProgram | None) -> ReferralProgramResponse:
        if program is None:
            return cls.none()
        return cls(
            Exists=True,
            Id=program.id,
            Provider=PROVIDER,
            Status=program.status,
            Revision=program.revision,
            LevelBasis=program.level_basis,
            LevelLookbackMonths=program.level_lookback_months,
            CommissionEligibilityMonths=program.commission_eligibility_months,
            DeliveryMode=program.delivery_mode,
            PayoutCurrency=program.payout_currency,
            VoucherClaimDays=program.voucher_claim_days,
            HoldDays=program.hold_days,
            QualifyingTopupMinimum=from_minor(
                program.qualifying_topup_minor, program.payout_currency
            ),
            Levels=[ReferralLevelResponse.of(Level.stored(row), program) for row in program.levels],
            CreatedAt=program.created_at,
            UpdatedAt=program.updated_at,
        )


class ReferralRelationshipCreate(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={"example": {"ReferrerUserId": 41, "ReferredUserId": 42}}
    )

    ReferrerUserId: Annotated[int, Field(ge=1, le=2**53 - 1), BeforeValidator(json_integer)]
    ReferredUserId: Annotated[int, Field(ge=1, le=2**53 - 1), BeforeValidator(json_integer)]


class ReferralRelationshipResponse(ResponseModel):
    Id: str = Field(json_schema_extra={"format": "uuid"})
    ProgramId: str = Field(json_schema_extra={"format": "uuid"})
    ReferrerUserId: int
    ReferredUserId: int
    Status: str = Field(examples=["REFERRED", "QUALIFIED"])
    QualifiedAt: datetime | None
    CreatedAt: datetime

    @classmethod
    def of(cls, row: ReferralRelationship) -> ReferralRelationshipResponse:
        return cls(
            Id=row.id,
            ProgramId=row.program_id,
            ReferrerUserId=row.referrer_user_id,
            ReferredUserId=row.referred_user_id,
            Status="QUALIFIED" if row.qualified_at is not None else "REFERRED",
            QualifiedAt=row.qualified_at,
            CreatedAt=row.created_at,
        )


class ReferralLevelChangeResponse(ResponseModel):
    FromLevel: str | None
    ToLevel: str
    Reason: str
    ProgramRevision: int
    ChangedAt: datetime

    @classmethod
    def of(cls, row: ReferralLevelChange) -> ReferralLevelChangeResponse:
        return cls(
            FromLevel=row.from_level,
            ToLevel=row.to_level,
            Reason=row.reason,
            ProgramRevision=row.program_revision,
            ChangedAt=row.changed_at,
        )


class ReferralLevelHistoryPage(ResponseModel):
    Items: list[ReferralLevelChangeResponse]
    Page: int
    PageSize: int
    HasMore: bool


class ReferralRewardHoldResponse(ResponseModel):
    Reason: str
    ReleasesAt: datetime | None


class ReferralRewardResponse(ResponseModel):
    Id: str = Field(json_schema_extra={"format": "uuid"})
    EventType: str = Field(examples=["WELCOME", "QUALIFICATION", "TOPUP"])
    BeneficiaryRole: str = Field(examples=["REFERRER", "REFERRED"])
    LevelCode: str
    BasisAmount: DecimalAmount
    BasisCurrency: str
    Amount: DecimalAmount
    Currency: str
    DeliveryMode: str
    Status: str = Field(
        description="`ACTIVE` while the reward may still be paid, `PAID`, or `CANCELLED`."
    )
    Stage: str = Field(examples=["PENDING", "HELD", "PAYABLE", "PAID", "CANCELLED"])
    CreditId: str | None = Field(json_schema_extra={"format": "uuid"})
    VoucherId: str | None = Field(json_schema_extra={"format": "uuid"})
    FriendAlias: str
    OccurredAt: datetime
    CreatedAt: datetime
    PaidAt: datetime | None
    Explanation: dict[str, Any]
    Balance: dict[str, Any] | None
    Holds: list[ReferralRewardHoldResponse]
    CancelReason: str | None

    @classmethod
    def of(cls, row: ReferralReward, friend_alias: str) -> ReferralRewardResponse:
        holds = []
        if row.stage in ("PENDING", "HELD"):
            holds.append(
                ReferralRewardHoldResponse(
                    Reason=row.hold_reason or "CLAWBACK_WINDOW", ReleasesAt=row.held_until
                )
            )
        status = {"PAID": "PAID", "CANCELLED": "CANCELLED"}.get(row.stage, "ACTIVE")
        balance = None
        if row.credit_card_id is not None:
            balance = {
                "CardId": row.credit_card_id,
                "Credited": from_minor(row.amount_minor, row.currency),
            }
        return cls(
            Id=row.id,
            EventType=row.event_type,
            BeneficiaryRole=row.beneficiary_role,
            LevelCode=row.level_code,
            BasisAmount=from_minor(row.basis_minor, row.basis_currency),
            BasisCurrency=row.basis_currency,
            Amount=from_minor(row.amount_minor, row.currency),
            Currency=row.currency,
            DeliveryMode=row.delivery_mode,
            Status=status,
            Stage=row.stage,
            CreditId=row.credit_id,
            VoucherId=row.voucher_id,
            FriendAlias=friend_alias,
            OccurredAt=row.occurred_at,
            CreatedAt=row.created_at,
            PaidAt=row.paid_at,
            Explanation=row.explanation,
            Balance=balance,
            Holds=holds,
            CancelReason=row.cancel_reason,
        )


class ReferralRewardPage(ResponseModel):
    Items: list[ReferralRewardResponse]
    Page: int
    PageSize: int
    HasMore: bool


class AssignedVoucherRedemptionResponse(ResponseModel):
    CardId: int
    CreditId: str = Field(json_schema_extra={"format": "uuid"})
    RedeemedAt: datetime | None = Field(description="Null while the card credit is in progress.")


class AssignedVoucherResponse(ResponseModel):
    AssignmentId: str = Field(json_schema_extra={"format": "uuid"})
    VoucherId: str = Field(json_schema_extra={"format": "uuid"})
    Name: str
    Amount: DecimalAmount
    Currency: str
    Status: str = Field(examples=["ASSIGNED", "REDEEMING", "REDEEMED", "EXPIRED"])
    Source: str = Field(examples=["REFERRAL_REWARD"])
    ReferralCommissionId: str = Field(
        json_schema_extra={"format": "uuid"}, description="The reward's `Id`."
    )
    AssignedAt: datetime
    ValidUntil: datetime
    Redemption: AssignedVoucherRedemptionResponse | None
    ReferralProgramId: str | None = Field(default=None, json_schema_extra={"format": "uuid"})

    @classmethod
    def of(cls, row: ReferralReward) -> AssignedVoucherResponse:
        assert row.voucher_id is not None
        assert row.voucher_assignment_id is not None
        assert row.voucher_assigned_at is not None
        assert row.voucher_valid_until is not None
        redemption = None
        if row.credit_id is not None and row.credit_card_id is not None:
            redemption = AssignedVoucherRedemptionResponse(
                CardId=row.credit_card_id, CreditId=row.credit_id, RedeemedAt=row.paid_at
            )
        return cls(
            AssignmentId=row.voucher_assignment_id,
            VoucherId=row.voucher_id,
            Name=VOUCHER_NAMES.get(row.event_type, "Referral reward"),
            Amount=from_minor(row.amount_minor, row.currency),
            Currency=row.currency,
            Status=assignment_status(row),
            Source="REFERRAL_REWARD",
            ReferralCommissionId=row.id,
            AssignedAt=row.voucher_assigned_at,
            ValidUntil=row.voucher_valid_until,
            Redemption=redemption,
            ReferralProgramId=row.program_id,
        )


VOUCHER_NAMES = {
    "WELCOME": "Referral welcome reward",
    "QUALIFICATION": "Referral qualification reward",
    "TOPUP": "Referral commission",
    "BOOST": "Referral boost award",
    "COMMUNITY_L2": "Community commission",
    "COMMUNITY_L3": "Community commission",
}


def assignment_status(row: ReferralReward) -> str:
    if row.stage == "PAID":
        return "REDEEMED"
    if row.stage == "PAYING":
        return "REDEEMING"
    if row.stage == "CANCELLED" or (
        row.voucher_valid_until is not None and row.voucher_valid_until <= utcnow()
    ):
        return "EXPIRED"
    return "ASSIGNED"


class AssignedVoucherPage(ResponseModel):
    Items: list[AssignedVoucherResponse]
    Page: int
    PageSize: int
    HasMore: bool


class ReferralRewardPayment(RequestModel):
    model_config = ConfigDict(json_schema_extra={"example": {"CardId": 17}})

    CardId: Annotated[int, Field(ge=1, le=2**53 - 1), BeforeValidator(json_integer)]


class ReferralOverviewResponse(ResponseModel):
    Program: ReferralProgramResponse
    TotalRelationships: int
    SuccessfulReferrals: int
    QualifyingTopupVolume: DecimalAmount
    PendingLiability: DecimalAmount
    PaidCommission: DecimalAmount
    Currency: str | None


ProgramIdQuery = Annotated[
    str | None, Query(alias="programId", pattern=UUID_PATTERN, description="Only this programme's.")
]


# ---------------------------------------------------------------------------------- boosts

MultiplierValue = Annotated[
    DecimalAmount, AmountRange(greater_than=Decimal(1), at_most=Decimal(10))
]
PositiveReward = Annotated[DecimalAmount, AmountRange(greater_than=Decimal(0), at_most=MAX_REWARD)]
Budget = Annotated[
    DecimalAmount, AmountRange(greater_than=Decimal(0), at_most=Decimal(100_000_000))
]
Count = Annotated[int, Field(ge=1, le=1_000_000), BeforeValidator(json_integer)]
RevisionNumber = Annotated[int, Field(ge=0, le=2**31 - 1), BeforeValidator(json_integer)]


class ReferralBoostCreate(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "Name": "Double December",
                "Kind": "MULTIPLIER",
                "StartsAt": "2026-12-01T00:00:00Z",
                "EndsAt": "2027-01-01T00:00:00Z",
                "Multiplier": 2,
                "MaximumIncrementalReward": 5,
                "MaximumAwards": 100,
                "FundedBudget": 250,
            }
        }
    )

    Name: Annotated[SafeText, Field(min_length=1, max_length=200)]
    Kind: Annotated[BoostKind, Field(strict=False)]
    StartsAt: Instant
    EndsAt: Instant
    Multiplier: MultiplierValue | None = Field(
        default=None, description="MULTIPLIER: top-up rewards times this (above 1, at most 10)."
    )
    QualifiedFriendCount: Count | None = Field(
        default=None, description="MILESTONE: friends referred in the window and qualified."
    )
    MilestoneAmount: PositiveReward | None = Field(
        default=None, description="MILESTONE: the award, in the programme's currency."
    )
    MaximumIncrementalReward: (
        Annotated[DecimalAmount, AmountRange(at_least=Decimal(0), at_most=MAX_REWARD)] | None
    ) = Field(default=None, description="MULTIPLIER: the most one award adds.")
    MaximumAwards: Count
    FundedBudget: Budget = Field(description="The most all awards together may be worth.")
    ExpectedProgramRevision: RevisionNumber | None = Field(
        default=None, description="When sent, a programme changed since is 409."
    )


class ProgramRevisionExpectation(RequestModel):
    model_config = ConfigDict(json_schema_extra={"example": {"ExpectedProgramRevision": 3}})

    ExpectedProgramRevision: RevisionNumber = Field(
        description="The programme's `Revision` the change is meant for: another is 409 "
        "`STALE_PROGRAM_REVISION`."
    )


class ReferralBoostResponse(ResponseModel):
    Id: str = Field(json_schema_extra={"format": "uuid"})
    Name: str
    Kind: str
    Status: str = Field(examples=["ACTIVE", "PAUSED", "SCHEDULED", "ENDED", "EXHAUSTED"])
    StartsAt: datetime
    EndsAt: datetime
    Multiplier: DecimalAmount | None
    QualifiedFriendCount: int | None
    MilestoneAmount: DecimalAmount | None
    MaximumIncrementalReward: DecimalAmount | None
    MaximumAwards: int
    FundedBudget: DecimalAmount
    Currency: str
    AllocatedAwards: int
    ReservedBudget: DecimalAmount
    PolicyHash: str
    ProgramRevision: int | None = Field(
        default=None, description="The programme's revision after this change."
    )

    @classmethod
    def of(cls, boost: ReferralBoost, revision: int | None = None) -> ReferralBoostResponse:
        currency = boost.currency

        def amount(minor: int | None) -> Decimal | None:
            return None if minor is None else from_minor(minor, currency)

        return cls(
            Id=boost.id,
            Name=boost.name,
            Kind=boost.kind,
            Status=reported(boost, utcnow()),
            StartsAt=boost.starts_at,
            EndsAt=boost.ends_at,
            Multiplier=None if boost.multiplier is None else Decimal(boost.multiplier),
            QualifiedFriendCount=boost.qualified_friend_count,
            MilestoneAmount=amount(boost.milestone_minor),
            MaximumIncrementalReward=amount(boost.maximum_incremental_minor),
            MaximumAwards=boost.maximum_awards,
            FundedBudget=from_minor(boost.funded_budget_minor, currency),
            Currency=currency,
            AllocatedAwards=boost.allocated_awards,
            ReservedBudget=from_minor(boost.reserved_budget_minor, currency),
            PolicyHash=boost.policy_hash,
            ProgramRevision=revision,
        )


class ReferralBoostList(ResponseModel):
    Boosts: list[ReferralBoostResponse]


# ------------------------------------------------------------------------------- community


class CommunityEnrolment(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "UserId": 41,
                "Plan": "AMBASSADOR",
                "L2Bps": 50,
                "L3Bps": 25,
                "AgreementReference": "AGR-2026-017",
            }
        }
    )

    UserId: Annotated[int, Field(ge=1, le=2**53 - 1), BeforeValidator(json_integer)]
    Plan: Annotated[str, Field(pattern=r"^[A-Z0-9_]{1,64}$", examples=["AMBASSADOR"])]
    L2Bps: Bps = Field(description="Share of the top-ups of the member's friends' friends.")
    L3Bps: Bps = Field(description="Share one level further.")
    ExpiresAt: MembershipExpiry | None = None
    AgreementReference: Annotated[SafeText, Field(max_length=100)] | None = None
    Notes: Annotated[SafeText, Field(max_length=1000)] | None = None


class CommunityRevocation(RequestModel):
    model_config = ConfigDict(json_schema_extra={"example": {"Reason": "Agreement ended"}})

    Reason: Annotated[SafeText, Field(min_length=1, max_length=500)]


class CommunityMemberResponse(ResponseModel):
    Id: str = Field(json_schema_extra={"format": "uuid"})
    UserId: int
    Plan: str
    ParentUserId: int | None
    PlanRevision: int
    L2Bps: int
    L3Bps: int
    EnabledAt: datetime
    ExpiresAt: datetime | None
    RevokedAt: datetime | None
    Status: str = Field(examples=["ACTIVE", "EXPIRED", "REVOKED"])
    AgreementReference: str | None
    Notes: str | None
    RevokeReason: str | None

    @classmethod
    def of(cls, member: ReferralCommunityMember) -> CommunityMemberResponse:
        status = member.status
        if status == "ACTIVE" and member.expires_at is not None and utcnow() >= member.expires_at:
            status = "EXPIRED"
        return cls(
            Id=member.id,
            UserId=member.user_id,
            Plan=member.plan,
            ParentUserId=member.parent_user_id,
            PlanRevision=member.plan_revision,
            L2Bps=member.l2_bps,
            L3Bps=member.l3_bps,
            EnabledAt=member.enabled_at,
            ExpiresAt=member.expires_at,
            RevokedAt=member.revoked_at,
            Status=status,
            AgreementReference=member.agreement_reference,
            Notes=member.notes,
            RevokeReason=member.revoke_reason,
        )
