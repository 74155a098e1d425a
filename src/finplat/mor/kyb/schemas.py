from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any

from pydantic import ConfigDict, Field

from finplat.business.schemas import IncorporationDay, Percentage, WebsiteUrl
from finplat.kit.fields import BirthDate, CountryCode, EmailAddress, SafeText
from finplat.kit.schemas import RequestModel, ResponseModel
from finplat.mor.kyb.models import MorKyb

MAX_UBOS = 25
Text100 = Annotated[SafeText, Field(max_length=100)]
Text200 = Annotated[SafeText, Field(max_length=200)]


class MorKybUboPersonRequest(RequestModel):
    """An ultimate beneficial owner of the merchant (sent to the banking provider as a person
    with the role UBO)."""

    FirstName: Text100
    LastName: Text100
    Email: EmailAddress = Field(description="One person per email on the application.")
    DateOfBirth: BirthDate
    Nationality: CountryCode
    OwnershipPercentage: Percentage | None = Field(
        default=None, description="Share of the business held, 0 to 100, two decimals at most."
    )


class MorKybRequest(RequestModel):
    """The MOR merchant's KYB (spec: `CompanyName`, `RegistrationNumber`,
    `RegistrationCountry`, `Industry`, `Website` required; the rest optional)."""

    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "CompanyName": "Merchant Ltd",
                "RegistrationNumber": "12345678",
                "RegistrationCountry": "GB",
                "Industry": "Retail",
                "Website": "https://merchant.example.com",
                "City": "London",
                "Ubos": [
                    {
                        "FirstName": "Ada",
                        "LastName": "Lovelace",
                        "Email": "ada@example.com",
                        "DateOfBirth": "1980-12-10",
                        "Nationality": "GB",
                        "OwnershipPercentage": 60,
                    }
                ],
            }
        }
    )

    CompanyName: Text200
    RegistrationNumber: Annotated[SafeText, Field(max_length=64)]
    RegistrationCountry: CountryCode
    Industry: Text100
    Website: WebsiteUrl
    IncorporationDate: IncorporationDay | None = None
    BusinessDescription: Annotated[SafeText, Field(max_length=2000)] | None = None
    AddressLine1: Text200 | None = None
    AddressLine2: Text200 | None = None
    City: Text100 | None = None
    State: Text100 | None = None
    Country: CountryCode | None = None
    PostalCode: Annotated[SafeText, Field(max_length=20)] | None = None
    PhoneNumber: Annotated[SafeText, Field(max_length=20)] | None = None
    PhoneCountryCode: Annotated[SafeText, Field(max_length=5)] | None = None
    UboInformation: dict[str, Any] | None = Field(
        default=None,
        description="Anything more about the business's ownership, passed to the banking "
        "provider with the compliance details as sent.",
    )
    Ubos: list[MorKybUboPersonRequest] | None = Field(
        default=None,
        max_length=MAX_UBOS,
        description="The ultimate beneficial owners. The first submission needs at least one "
        "(409 `MOR_KYB_UBOS_REQUIRED`); a resubmission after NEEDS_INFO keeps those sent.",
    )


class MorKybResponse(ResponseModel):
    Status: str = Field(
        description="SUBMITTED, IN_REVIEW, APPROVED, REJECTED or NEEDS_INFO.",
        examples=["SUBMITTED"],
    )
    Submissions: int = Field(description="How many times the merchant has submitted.")
    Reason: str | None = Field(
        description="Why it was rejected, or what the reviewers ask for (NEEDS_INFO)."
    )
    CompanyName: str
    RegistrationNumber: str
    RegistrationCountry: str
    SubmittedAt: datetime
    UpdatedAt: datetime

    @classmethod
    def of(cls, kyb: MorKyb) -> MorKybResponse:
        sent = json.loads(kyb.submitted)
        return cls(
            Status=kyb.status,
            Submissions=kyb.submissions,
            Reason=kyb.reason,
            CompanyName=sent["CompanyName"],
            RegistrationNumber=sent["RegistrationNumber"],
            RegistrationCountry=sent["RegistrationCountry"],
            SubmittedAt=kyb.submitted_at,
            UpdatedAt=kyb.updated_at,
        )
