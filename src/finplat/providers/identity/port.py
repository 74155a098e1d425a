"""Identity verification (the verification provider): applicants, access tokens, reviews."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

APPLICANT_REVIEWED = "applicant.reviewed"


class ReviewAnswer(StrEnum):
    GREEN = "GREEN"
    RED = "RED"


class RejectType(StrEnum):
    FINAL = "FINAL"  # rejected
    RETRY = "RETRY"  # the applicant must resubmit


class TokenKind(StrEnum):
    HOSTED = "HOSTED"  # a link to the provider's hosted verification page
    SDK = "SDK"  # a token for the provider's mobile SDK


@dataclass(frozen=True)
class ApplicantData:
    """Who is verified. `tin` is the tax id (a US SSN): stored by the provider only."""

    reference: str
    level_name: str
    first_name: str
    last_name: str
    email: str
    date_of_birth: date
    country: str
    nationality: str | None = None
    tin: str | None = field(default=None, repr=False)
    questionnaire: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Applicant:
    applicant_id: str
    is_new: bool


@dataclass(frozen=True)
class AccessToken:
    token: str = field(repr=False)
    expires_at: datetime
    url: str | None


@dataclass(frozen=True)
class ShareToken:
    token: str = field(repr=False)
    expires_at: datetime


@dataclass(frozen=True)
class IdentityDocument:
    """A manual KYC payload's identity document."""

    type: str
    number: str = field(repr=False)
    issuing_country: str
    issue_date: date
    expiry_date: date | None


class IdentityVerification(Protocol):
    name: str

    async def create_applicant(self, *, company_id: int, data: ApplicantData) -> Applicant:
        """Idempotent by `data.reference`: the same reference returns the same applicant."""
        ...

    async def access_token(
        self,
        *,
        company_id: int,
        applicant_id: str,
        kind: TokenKind,
        ttl: timedelta,
        base_url: str,
    ) -> AccessToken: ...

    async def import_shared_identity(
        self, *, company_id: int, applicant_id: str, share_token: str
    ) -> None:
        """Reuse an identity verified elsewhere; the review arrives as a callback."""
        ...

    async def submit_document(
        self, *, company_id: int, applicant_id: str, document: IdentityDocument
    ) -> None:
        """A complete manual payload; the review arrives as a callback."""
        ...

    async def share_token(
        self, *, company_id: int, applicant_id: str, ttl: timedelta
    ) -> ShareToken: ...

    async def tax_id(self, *, company_id: int, applicant_id: str) -> str | None:
        """The applicant's stored tax id, for forwarding to a card provider."""
        ...

    async def submit_edd(
        self, *, company_id: int, applicant_id: str, answers: dict[str, Any]
    ) -> None:
        """Store the applicant's enhanced due diligence answers (a repeat replaces them)."""
        ...


@runtime_checkable
class IdentityReviewSimulation(Protocol):
    """Sandbox only: decide an applicant's review as the provider's reviewers would."""

    async def review(
        self, *, company_id: int, applicant_id: str, answer: ReviewAnswer, reject_type: RejectType
    ) -> None: ...
