from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import ConfigDict, Field, JsonValue

from finplat.kit.fields import CountryCode, IsoDate, SafeText
from finplat.kit.schemas import RequestModel, ResponseModel
from finplat.kyc.statuses import KycMethod, Outcome
from finplat.providers.names import BankProvider
from finplat.provisioning.schemas import ProviderStatus

US_NATIONALITIES = ("US", "USA")
SSN_PATTERN = r"^[0-9]{9}$"

# The SSN rule in the document: when `Nationality` says US, `Ssn` is required. When the
# request has no `Nationality`, the user's `Country` decides (checked by the service).
SSN_REQUIRED_FOR_US_NATIONALITY: list[JsonValue] = [
    {"not": {"required": ["Nationality"], "properties": {"Nationality": {"enum": ["US", "USA"]}}}},
    {"required": ["Ssn"], "properties": {"Ssn": {"type": "string"}}},
]

NationalityCode = Annotated[
    str,
    Field(
        min_length=2,
        max_length=3,
        pattern=r"^[A-Z]{2,3}$",
        description="ISO 3166-1 alpha-2 or alpha-3 code. When omitted, the user's `Country` is "
        "the effective nationality.",
        examples=["GB", "USA"],
    ),
]
SsnDigits = Annotated[
    str,
    Field(
        pattern=SSN_PATTERN,
        description="US Social Security Number, exactly 9 digits. Required when the effective "
        "nationality (`Nationality`, else the user's `Country`) is `US` or `USA`. Stored with "
        "the verification provider as `tin`, forwarded to the card provider as `ssn`; never "
        "returned or logged.",
        json_schema_extra={"writeOnly": True},
    ),
]


# The spec leaves the value open: the address as the caller saw it (IPv4, IPv6, with a zone or
# a port), kept with the questionnaire for the verification provider's risk checks.
IpAddressText = Annotated[SafeText, Field(max_length=64, examples=["203.0.113.7"])]


class KycQuestionnaire(RequestModel):
    """The KYC session request: questionnaire answers the verification provider keeps."""

    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "Occupation": "Engineer",
                "AnnualSalary": "50000-100000",
                "AccountPurpose": "Everyday spending",
                "ExpectedMonthlyVolume": "1000-5000",
                "IpAddress": "203.0.113.7",
            },
            "anyOf": SSN_REQUIRED_FOR_US_NATIONALITY,
        }
    )

    Occupation: Annotated[SafeText, Field(max_length=100)] | None = None
    AnnualSalary: Annotated[SafeText, Field(max_length=50, description="A range.")] | None = None
    AccountPurpose: Annotated[SafeText, Field(max_length=200)] | None = None
    ExpectedMonthlyVolume: (
        Annotated[SafeText, Field(max_length=50, description="A range.")] | None
    ) = None
    DocumentIssueDate: IsoDate | None = None
    IpAddress: IpAddressText | None = Field(
        default=None,
        description="The applicant's IP address as your backend saw it (IPv4 or IPv6, "
        "usually); kept as sent with the questionnaire.",
    )
    Nationality: NationalityCode | None = None
    Ssn: SsnDigits | None = None


class ReusableIdentityRequest(KycQuestionnaire):
    """Reuse an identity the verification provider already verified for this person."""

    model_config = ConfigDict(
        json_schema_extra={
            "example": {"ShareToken": "sbx_share_..."},
            "anyOf": SSN_REQUIRED_FOR_US_NATIONALITY,
        }
    )

    ShareToken: Annotated[str, Field(min_length=8, max_length=200, pattern=r"^[!-~]+$")] = Field(
        description="A share token the provider issued for the person's verified identity "
        "(see `POST /api/v2/users/{userId}/kyc/share-token`)."
    )


class IdentityDocumentInput(RequestModel):
    Type: Literal["PASSPORT", "ID_CARD", "DRIVERS_LICENSE", "RESIDENCE_PERMIT"] = Field(
        description="A closed list: the verification provider checks each kind of identity "
        "document against its own rules."
    )
    Number: Annotated[str, Field(min_length=4, max_length=30, pattern=r"^[A-Za-z0-9-]+$")]
    IssuingCountry: CountryCode
    IssueDate: IsoDate
    ExpiryDate: IsoDate | None = None


class ManualKycRequest(KycQuestionnaire):
    """A complete manual payload: questionnaire and the identity document's data."""

    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "Document": {
                    "Type": "PASSPORT",
                    "Number": "123456789",
                    "IssuingCountry": "GB",
                    "IssueDate": "2020-01-15",
                    "ExpiryDate": "2030-01-14",
                }
            },
            "anyOf": SSN_REQUIRED_FOR_US_NATIONALITY,
        }
    )

    Document: IdentityDocumentInput


class KycConfiguration(ResponseModel):
    levelName: str = Field(description="The verification level the applicant goes through.")


class KycSessionResponse(ResponseModel):
    Success: bool
    Method: KycMethod = Field(description="The user's one KYC method.")
    AccessToken: str | None = Field(
        description="Short-lived token for the hosted page or the mobile SDK; expires at "
        "`ExpiresAt`. Null for methods without one."
    )
    Url: str | None = Field(
        description="The hosted verification page (hosted-link method only). Hand it to the "
        "applicant; it expires with the token."
    )
    ApplicantId: str
    ExternalUserId: str
    KycSubmissionId: int
    Status: str = Field(examples=["PENDING"])
    ExistingStatus: str = Field(description="The user's KycStatus before this request.")
    ExpiresAt: datetime | None
    CreatedAt: datetime
    IsNewApplicant: bool
    Message: str
    Configuration: KycConfiguration


class ShareTokenResponse(ResponseModel):
    ShareToken: str = Field(description="Hand to another partner; single use.")
    ExpiresAt: datetime


class CryptoEddStatus(ResponseModel):
    Status: str = Field(description="`SUBMITTED`: stored with the verification provider.")
    SubmittedAt: datetime


class DetailedStatusResponse(ResponseModel):
    UserId: int
    KycStatus: str = Field(
        description="Base identity verification: NOT_STARTED, PENDING, APPROVED, REJECTED, "
        "RESUBMISSION_REQUIRED."
    )
    Method: KycMethod | None
    ApplicantId: str | None
    ReviewedAt: datetime | None
    Providers: list[ProviderStatus]
    CryptoEdd: CryptoEddStatus | None = Field(
        default=None,
        description="The crypto enhanced due diligence, once submitted "
        "(`POST /api/v2/crypto-virtual-accounts/verification/edd`).",
    )


class SandboxKycDecision(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {"Outcome": "APPROVED"},
            # Card and switch provider accounts are approved or rejected, never resubmitted.
            "anyOf": [
                {"properties": {"Provider": {"enum": [None, "bankprov"]}}},
                {"properties": {"Outcome": {"enum": ["APPROVED", "REJECTED"]}}},
            ],
        }
    )

    Outcome: Annotated[Outcome, Field(strict=False)]
    Provider: Annotated[BankProvider, Field(strict=False)] | None = Field(
        default=None,
        description="Without it, decides base identity verification; with it, that "
        "provider's own onboarding checks.",
    )
