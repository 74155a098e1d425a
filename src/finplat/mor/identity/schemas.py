from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import Field

from finplat.kit.fields import BirthDate, CountryCode, EmailAddress, SafeText
from finplat.kit.schemas import RequestModel, ResponseModel
from finplat.kyc.schemas import KycQuestionnaire
from finplat.mor.identity.passwords import MAX_LENGTH, MIN_LENGTH, MIXED_PATTERN
from finplat.users.models import User

Password = Annotated[
    str,
    Field(
        min_length=MIN_LENGTH,
        max_length=MAX_LENGTH,
        description=f"{MIN_LENGTH} to {MAX_LENGTH} characters with at least one letter (A-Z, "
        "a-z) and one character that is not a letter, and not the email. Never returned or "
        "logged.",
        # The pattern is the service's own check (`passwords.check_policy`), stated here.
        json_schema_extra={"writeOnly": True, "pattern": MIXED_PATTERN},
    ),
]


class MorSimpleUserRequest(RequestModel):
    """A simple user of the MOR merchant (spec: all four fields required)."""

    # No example: a password shown in the document would be one someone copies.

    Email: EmailAddress = Field(description="Signs the user in; unique in the company.")
    FirstName: Annotated[SafeText, Field(max_length=100)]
    LastName: Annotated[SafeText, Field(max_length=100)]
    Password: Password


class MorSimpleUserResponse(ResponseModel):
    Id: int = Field(description="The user's `Id` (the users domain's: KYC, cards, widgets).")
    Email: str
    FirstName: str
    LastName: str
    Status: str = Field(examples=["ACTIVE"])
    KycStatus: str = Field(examples=["NOT_STARTED"])
    TierId: int | None
    CreatedAt: datetime

    @classmethod
    def of(cls, user: User) -> MorSimpleUserResponse:
        return cls(
            Id=user.id,
            Email=user.email,
            FirstName=user.first_name,
            LastName=user.last_name,
            Status=user.status,
            KycStatus=user.kyc_status,
            TierId=user.tier_id,
            CreatedAt=user.created_at,
        )


class MorTokenRequest(RequestModel):
    # Any string up to the bounds: a wrong email or password is the same 401, never a 400
    # that would tell an address apart from a password.
    Email: Annotated[str, Field(min_length=1, max_length=320)]
    Password: Annotated[str, Field(min_length=1, max_length=MAX_LENGTH)]


class MorTokenResponse(ResponseModel):
    AccessToken: str = Field(
        description="Send it as `Authorization: Bearer <AccessToken>` with the key's "
        "`x-api-key`. Shown this once; only its hash is kept."
    )
    ExpiresAt: datetime


class MorTokenRevocation(RequestModel):
    AccessToken: Annotated[str, Field(min_length=1, max_length=200)]


class MorPasswordChange(RequestModel):
    CurrentPassword: Annotated[str, Field(min_length=1, max_length=MAX_LENGTH)]
    NewPassword: Password


class MorKycLinkRequest(KycQuestionnaire):
    """The simple user's hosted verification link: the KYC questionnaire plus the birth date
    and country a simple user has not given yet."""

    DateOfBirth: BirthDate
    Country: CountryCode


class MorKycLinkResponse(ResponseModel):
    Url: str | None = Field(description="The hosted verification page, for the user only.")
    ExpiresAt: datetime | None
    KycSubmissionId: int
    Status: str = Field(description="The user's `KycStatus`.", examples=["PENDING"])
