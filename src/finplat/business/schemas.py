"""Wire shapes of business onboarding.

The application's response keeps the spec's lower-case names; everything else is PascalCase.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Annotated, Any, Literal

from fastapi import Path, Query
from pydantic import (
    AfterValidator,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    model_validator,
)

from finplat.business import markets
from finplat.business.models import AssociatedPerson, BusinessApplication, BusinessDocument
from finplat.kit.clock import today
from finplat.kit.fields import (
    BirthDate,
    CountryCode,
    EmailAddress,
    IsoDate,
    SafeText,
    json_integer,
)
from finplat.kit.money import DecimalAmount
from finplat.kit.pagination import Page
from finplat.kit.schemas import MAX_ID, PARAMETER_ID, RequestModel, ResponseModel

UserIdQuery = Annotated[
    int,
    Query(ge=1, le=MAX_ID, description="The business user's `Id`."),
    PARAMETER_ID,
]
PersonIdPath = Annotated[
    int,
    Path(ge=1, le=MAX_ID, description="An associated person's `Id`."),
    PARAMETER_ID,
]

# The spec gives `BusinessType` no values and nothing here depends on one: it is the
# business's legal form in its own words, passed to the provider as sent.
BusinessTypeText = Annotated[SafeText, Field(max_length=64, examples=["LIMITED_COMPANY"])]
BUSINESS_TYPE = (
    "The business's legal form, as its registry names it (such as `LIMITED_COMPANY`, `Private "
    "limited company`, `GmbH`); kept and passed to the banking provider as sent."
)
# Closed lists of this service's own objects, kept because the banking provider's KYB review
# needs them: who a person is to the business, and which address is the registered one.
PersonRole = Annotated[
    Literal["DIRECTOR", "UBO", "SHAREHOLDER"],
    Field(
        description="A closed list: the banking provider's KYB checks differ by role "
        "(directors, ultimate beneficial owners, shareholders)."
    ),
]
AddressType = Annotated[
    Literal["REGISTERED", "TRADING", "OPERATING"],
    Field(
        description="A closed list: the banking provider's KYB review needs to know which "
        "address is the registered one."
    ),
]
ApplicationStatus = Literal[
    "draft", "submitted", "in_review", "approved", "rejected", "more_information_required"
]
ApplicationDocumentType = Literal[
    "CERTIFICATE_OF_INCORPORATION",
    "ARTICLES_OF_ASSOCIATION",
    "SHAREHOLDER_REGISTER",
    "PROOF_OF_ADDRESS",
    "BANK_STATEMENT",
    "OTHER",
]
PersonDocumentType = Literal[
    "PASSPORT",
    "NATIONAL_ID",
    "DRIVING_LICENCE",
    "PROOF_OF_ADDRESS",
    "OTHER",
]

# A whole number from 0 to ten million (bounds before the JSON-integer check, so that the
# document shows them as minimum and maximum).
Count = Annotated[int, Field(ge=0, le=10_000_000), BeforeValidator(json_integer)]

EARLIEST_INCORPORATION = date(1800, 1, 1)
URL_PATTERN = r"^https?://[^\u0000-\u0020\u007f-\u009f]+$"
_RFC3339 = re.compile(
    r"^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
)

WebsiteUrl = Annotated[
    str,
    Field(
        max_length=2048,
        pattern=URL_PATTERN,
        examples=["https://example.com"],
        description="An http(s) URL.",
    ),
]


def _market(value: Any) -> str:
    if value in markets.REFUSED_MARKETS:
        raise ValueError(f"Market {value} is not offered for business onboarding: use UK or EU.")
    if value not in tuple(markets.Market):
        raise ValueError("Must be UK or EU.")
    return str(value)


MarketField = Annotated[
    str,
    BeforeValidator(_market),
    WithJsonSchema(
        {
            "type": "string",
            "enum": [m.value for m in markets.Market],
            "description": "`UK` or `EU` (`US` and `UP` are not offered). When omitted, it "
            "follows from `CountryOfIncorporation`: GB is UK, an EU member state is EU.",
        }
    ),
]


def _incorporation_date(value: date) -> date:
    if value > today():
        raise ValueError("Must not be in the future.")
    if value < EARLIEST_INCORPORATION:
        raise ValueError("Must be on or after 1800-01-01.")
    return value


IncorporationDay = Annotated[
    IsoDate,
    AfterValidator(_incorporation_date),
    WithJsonSchema(
        {
            "type": "string",
            "format": "date",
            "description": "YYYY-MM-DD, not in the future and not before 1800-01-01.",
            "examples": ["2015-03-02"],
        }
    ),
]


def _date_time(value: Any) -> datetime:
    """RFC 3339 date-time with an offset (a leap second counts as the last second)."""
    if isinstance(value, datetime):
        return value
    match = _RFC3339.match(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError("Must be an RFC 3339 date-time with an offset, e.g. 2015-03-02T00:00:00Z.")
    day, minutes, seconds, fraction, offset = match.groups()
    text = f"{day}T{minutes}:{min(int(seconds), 59):02d}{fraction or ''}"
    text += "+00:00" if offset in ("Z", "z") else offset
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError("Not a real date and time.") from None
    return parsed.astimezone(UTC)


DateTimeValue = Annotated[
    datetime,
    BeforeValidator(_date_time),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]


def _percentage(value: Decimal) -> Decimal:
    if value < 0 or value > 100:
        raise ValueError("Must be between 0 and 100.")
    if value != value.quantize(Decimal("0.01")):
        raise ValueError("Must have at most two decimals.")
    return value


Percentage = Annotated[
    DecimalAmount,
    AfterValidator(_percentage),
    WithJsonSchema({"type": "number", "minimum": 0, "maximum": 100, "multipleOf": 0.01}),
]


class BusinessApplicationCreate(RequestModel):
    """A business's application to the banking provider."""

    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "Market": "UK",
                "BusinessType": "LIMITED_COMPANY",
                "CountryOfIncorporation": "GB",
                "RegisteredName": "Analytical Engines Ltd",
                "RegistrationNumber": "09876543",
                "BusinessOverview": "Design and sale of calculating machines.",
                "IndustryMain": "Manufacturing",
                "IndustrySub": "Office machinery",
                "EmployeeCount": 12,
                "IncorporationDate": "2015-03-02",
                "Website": "https://example.com",
            },
            # A market is needed: given, or inferable from the country of incorporation.
            "anyOf": [
                {
                    "required": ["Market"],
                    "properties": {"Market": {"enum": [m.value for m in markets.Market]}},
                },
                {
                    "required": ["CountryOfIncorporation"],
                    "properties": {
                        "CountryOfIncorporation": {"enum": list(markets.INFERABLE_COUNTRIES)}
                    },
                },
            ],
        }
    )

    Market: MarketField | None = None
    BusinessType: BusinessTypeText = Field(description=BUSINESS_TYPE)
    CountryOfIncorporation: CountryCode | None = Field(
        default=None,
        description="ISO 3166-1 alpha-2. Decides the market when `Market` is omitted "
        "(GB: UK; an EU member state: EU); with another country, send `Market`.",
    )
    RegisteredName: Annotated[SafeText, Field(max_length=200)]
    RegistrationNumber: Annotated[SafeText, Field(max_length=64)]
    BusinessOverview: Annotated[SafeText, Field(max_length=2000)] | None = None
    IndustryMain: Annotated[SafeText, Field(max_length=100)] | None = None
    IndustrySub: Annotated[SafeText, Field(max_length=100)] | None = None
    EmployeeCount: Count | None = None
    IncorporationDate: IncorporationDay | None = None
    Website: WebsiteUrl | None = None

    @model_validator(mode="after")
    def _has_market(self) -> BusinessApplicationCreate:
        if self.Market is None and (
            self.CountryOfIncorporation is None
            or markets.infer_market(self.CountryOfIncorporation) is None
        ):
            raise ValueError(
                "Send Market (UK or EU), or a CountryOfIncorporation that decides it "
                "(GB or an EU member state)."
            )
        return self

    def market(self) -> str:
        if self.Market is not None:
            return self.Market
        assert self.CountryOfIncorporation is not None
        inferred = markets.infer_market(self.CountryOfIncorporation)
        assert inferred is not None
        return inferred.value


class BusinessApplicationResponse(ResponseModel):
    """The application, with the spec's lower-case names."""

    id: int = Field(description="The application's id.")
    status: ApplicationStatus = Field(description="`draft` on creation.")
    accountId: str | None = Field(
        description="The banking provider's account, once the application is approved."
    )
    market: str = Field(examples=["UK"])
    type: str = Field(description="The `BusinessType`.", examples=["LIMITED_COMPANY"])
    registeredName: str
    registrationNumber: str
    countryOfIncorporation: str | None
    createdAt: datetime

    @classmethod
    def of(cls, application: BusinessApplication) -> BusinessApplicationResponse:
        return cls(
            id=application.id,
            status=application.status,
            accountId=application.account_id,
            market=application.market,
            type=application.business_type,
            registeredName=application.registered_name,
            registrationNumber=application.registration_number,
            countryOfIncorporation=application.country_of_incorporation,
            createdAt=application.created_at,
        )


class ApplicationAddress(RequestModel):
    """One of the business's addresses; values are kept as sent."""

    Type: AddressType
    AddressLine1: Annotated[SafeText, Field(max_length=200)]
    AddressLine2: Annotated[SafeText, Field(max_length=200)] | None = None
    City: Annotated[SafeText, Field(max_length=100)]
    Region: Annotated[SafeText, Field(max_length=100)] | None = None
    PostalCode: Annotated[SafeText, Field(max_length=20)] | None = None
    Country: CountryCode


class ComplianceData(RequestModel):
    """What the business does with the account, for the provider's risk assessment."""

    SourceOfFunds: Annotated[SafeText, Field(max_length=500)] | None = None
    ExpectedMonthlyVolume: Annotated[SafeText, Field(max_length=50)] | None = Field(
        default=None, description="A range, such as `10000-50000` (in the account currency)."
    )
    ExpectedMonthlyTransactions: Count | None = None
    RegulatedActivity: bool | None = None
    RegulatorName: Annotated[SafeText, Field(max_length=200)] | None = None
    LicenceNumber: Annotated[SafeText, Field(max_length=100)] | None = None
    HasPoliticallyExposedPersons: bool | None = None
    OperatesInSanctionedCountries: bool | None = None
    CashIntensive: bool | None = None


class ComplianceRequirements(RequestModel):
    """The application's compliance requirements; every field optional. Each request
    replaces what was sent before."""

    BusinessType: BusinessTypeText | None = Field(default=None, description=BUSINESS_TYPE)
    IndustryMain: Annotated[SafeText, Field(max_length=100)] | None = None
    IndustrySub: Annotated[SafeText, Field(max_length=100)] | None = None
    Country: CountryCode | None = None
    Region: Annotated[SafeText, Field(max_length=100)] | None = None
    Website: WebsiteUrl | None = None
    PromotionDescription: Annotated[SafeText, Field(max_length=2000)] | None = None
    TaxId: Annotated[SafeText, Field(max_length=64)] | None = None
    IncorporationDate: DateTimeValue | None = None
    Addresses: Annotated[list[ApplicationAddress], Field(max_length=10)] | None = None
    PaymentCountries: Annotated[list[CountryCode], Field(max_length=250)] | None = None
    Compliance: ComplianceData | None = None


class ComplianceRequirementsResponse(ComplianceRequirements):
    """The stored compliance requirements, as sent."""

    model_config = ConfigDict(title="ComplianceRequirementsResponse")

    ApplicationId: int
    UpdatedAt: datetime


class AssociatedPersonCreate(RequestModel):
    """A director, ultimate beneficial owner (UBO) or shareholder of the business."""

    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "FirstName": "Charles",
                "LastName": "Babbage",
                "Email": "charles@example.com",
                "Role": "DIRECTOR",
                "OwnershipPercentage": 25.5,
                "DateOfBirth": "1971-12-26",
                "Nationality": "GB",
            }
        }
    )

    FirstName: Annotated[SafeText, Field(max_length=100)]
    LastName: Annotated[SafeText, Field(max_length=100)]
    Email: EmailAddress = Field(description="Unique among the application's people.")
    Role: PersonRole
    OwnershipPercentage: Percentage | None = Field(
        default=None, description="Share of the business held, 0 to 100, two decimals at most."
    )
    DateOfBirth: BirthDate
    Nationality: CountryCode


class AssociatedPersonResponse(ResponseModel):
    Id: int = Field(description="The person's id (`personId` in paths and events).")
    ApplicationId: int
    FirstName: str
    LastName: str
    Email: str
    Role: str
    OwnershipPercentage: DecimalAmount | None
    DateOfBirth: date
    Nationality: str
    CreatedAt: datetime

    @classmethod
    def of(cls, person: AssociatedPerson) -> AssociatedPersonResponse:
        hundredths = person.ownership_hundredths
        return cls(
            Id=person.id,
            ApplicationId=person.application_id,
            FirstName=person.first_name,
            LastName=person.last_name,
            Email=person.email,
            Role=person.role,
            OwnershipPercentage=None if hundredths is None else Decimal(hundredths).scaleb(-2),
            DateOfBirth=person.date_of_birth,
            Nationality=person.nationality,
            CreatedAt=person.created_at,
        )


class AssociatedPersonPage(Page[AssociatedPersonResponse]):
    """A page of an application's associated people, oldest first."""


class BusinessDocumentResponse(ResponseModel):
    Id: int
    ApplicationId: int
    PersonId: int | None = Field(description="Set for a person's document.")
    DocumentType: str
    ContentType: str = Field(examples=["application/pdf"])
    SizeBytes: int
    CreatedAt: datetime

    @classmethod
    def of(cls, document: BusinessDocument) -> BusinessDocumentResponse:
        return cls(
            Id=document.id,
            ApplicationId=document.application_id,
            PersonId=document.person_id,
            DocumentType=document.document_type,
            ContentType=document.content_type,
            SizeBytes=document.size_bytes,
            CreatedAt=document.created_at,
        )


DOCUMENT_TYPE_REASON = "A closed list: the banking provider files and reviews documents by type."


class ApplicationDocumentForm(RequestModel):
    """The text part of an application document upload."""

    DocumentType: ApplicationDocumentType = Field(description=DOCUMENT_TYPE_REASON)


class PersonDocumentForm(RequestModel):
    """The text part of an associated person's document upload."""

    DocumentType: PersonDocumentType = Field(description=DOCUMENT_TYPE_REASON)
