from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from finplat.kit.fields import (
    BirthDate,
    CountryCode,
    E164Phone,
    EmailAddress,
    SafeText,
)
from finplat.kit.pagination import Page
from finplat.kit.schemas import BodyId, RequestModel, ResponseModel
from finplat.users.models import User

AccountTypeValue = Literal["personal", "business"]


class UserCreate(RequestModel):
    """A new user. Identity fields are required; the address lines may follow later."""

    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "Email": "ada@example.com",
                "FirstName": "Ada",
                "LastName": "Lovelace",
                "Phone": "+447911123456",
                "ExternalUserId": "cust_8421",
                "AccountType": "personal",
                "DateOfBirth": "1990-05-17",
                "Address": "12 Analytical Row",
                "City": "London",
                "Country": "GB",
                "ZipCode": "N1 9GU",
            }
        }
    )

    Email: EmailAddress
    FirstName: Annotated[SafeText, Field(max_length=100)]
    LastName: Annotated[SafeText, Field(max_length=100)]
    Phone: E164Phone
    ExternalUserId: Annotated[SafeText, Field(max_length=255)] = Field(
        description="The caller's stable customer id (not an address that may change); "
        "unique within the company.",
    )
    AccountType: AccountTypeValue = Field(
        description="Send it explicitly: `personal` or `business`."
    )
    DateOfBirth: BirthDate
    Address: Annotated[SafeText, Field(max_length=200)] | None = None
    City: Annotated[SafeText, Field(max_length=100)] | None = None
    Country: CountryCode
    ZipCode: Annotated[SafeText, Field(max_length=20)] | None = None


class TierSelection(RequestModel):
    TierId: BodyId = Field(description="A tier `Id` from `GET /api/v2/tiers`.")


class UserResponse(ResponseModel):
    Id: int = Field(description="Use this id in every later call about the user.")
    ExternalUserId: str
    Email: str
    FirstName: str
    LastName: str
    Phone: str
    DateOfBirth: date
    Address: str | None
    City: str | None
    Country: str
    ZipCode: str | None
    Status: str = Field(examples=["ACTIVE"])
    KycStatus: str = Field(examples=["NOT_STARTED"])
    AccountType: AccountTypeValue
    TierId: int | None
    CompanyId: int
    CreatedAt: datetime
    UpdatedAt: datetime

    @classmethod
    def of(cls, user: User) -> UserResponse:
        return cls(
            Id=user.id,
            ExternalUserId=user.external_user_id,
            Email=user.email,
            FirstName=user.first_name,
            LastName=user.last_name,
            Phone=user.phone,
            DateOfBirth=user.date_of_birth,
            Address=user.address,
            City=user.city,
            Country=user.country,
            ZipCode=user.zip_code,
            Status=user.status,
            KycStatus=user.kyc_status,
            AccountType=user.account_type,
            TierId=user.tier_id,
            CompanyId=user.company_id,
            CreatedAt=user.created_at,
            UpdatedAt=user.updated_at,
        )


class UserPage(Page[UserResponse]):
    """A page of users."""
