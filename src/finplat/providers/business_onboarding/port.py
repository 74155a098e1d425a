"""The banking provider's business onboarding (KYB): an application, its people and documents.

Every operation that creates something takes an `idempotency_key`: the same key always answers
with the first result and creates nothing more, so a retry after a lost answer is safe.
Refusals are `ProviderRejected` carrying the provider's own HTTP status, field errors and
details. Decisions arrive later as `application.status_changed` callbacks; people created are
announced with `person.created` callbacks (`{id, primaryEmailAddress, applicationId, ...}`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable


class ApplicationState(StrEnum):
    """An application's status at the provider (the platform reports the same values)."""

    DRAFT = "draft"
    SUBMITTED = "submitted"
    IN_REVIEW = "in_review"
    APPROVED = "approved"
    REJECTED = "rejected"
    MORE_INFORMATION_REQUIRED = "more_information_required"


class Decision(StrEnum):
    """A review decision (the sandbox's control; a real provider decides by itself)."""

    APPROVED = "approved"
    REJECTED = "rejected"
    MORE_INFORMATION_REQUIRED = "more_information_required"


@dataclass(frozen=True)
class ApplicationDetails:
    market: str
    business_type: str
    registered_name: str
    registration_number: str
    country_of_incorporation: str | None = None
    business_overview: str | None = None
    industry_main: str | None = None
    industry_sub: str | None = None
    employee_count: int | None = None
    incorporation_date: date | None = None
    website: str | None = None


@dataclass(frozen=True)
class ProviderApplication:
    application_id: str
    status: ApplicationState
    # The business's account, opened (pending) when the application is first submitted and
    # usable once the application is approved.
    account_id: str | None = None


@dataclass(frozen=True)
class PersonDetails:
    first_name: str
    last_name: str
    email: str
    role: str
    date_of_birth: date
    nationality: str
    ownership_percentage: Decimal | None = None


@dataclass(frozen=True)
class ProviderPerson:
    person_id: str


@dataclass(frozen=True)
class DocumentUpload:
    document_type: str
    content_type: str
    content: bytes


@dataclass(frozen=True)
class ProviderDocument:
    document_id: str


class BusinessOnboarding(Protocol):
    """The banking provider's KYB interface."""

    name: str

    async def create_application(
        self, *, company_id: int, idempotency_key: str, details: ApplicationDetails
    ) -> ProviderApplication: ...

    async def update_compliance(
        self, *, company_id: int, application_id: str, requirements: Mapping[str, Any]
    ) -> None:
        """Replace the application's compliance requirements (repeatable: same input, same
        state)."""

    async def add_person(
        self,
        *,
        company_id: int,
        application_id: str,
        idempotency_key: str,
        person: PersonDetails,
    ) -> ProviderPerson: ...

    async def upload_person_document(
        self,
        *,
        company_id: int,
        application_id: str,
        person_id: str,
        idempotency_key: str,
        document: DocumentUpload,
    ) -> ProviderDocument: ...

    async def upload_application_document(
        self,
        *,
        company_id: int,
        application_id: str,
        idempotency_key: str,
        document: DocumentUpload,
    ) -> ProviderDocument: ...

    async def submit_application(
        self, *, company_id: int, application_id: str, idempotency_key: str
    ) -> ProviderApplication:
        """Send the application for review (from draft or after more information was asked
        for); the review outcome follows as callbacks."""


@runtime_checkable
class BusinessOnboardingSimulation(Protocol):
    """Sandbox control: decide a submitted application as the provider's reviewers would."""

    async def decide(
        self, *, company_id: int, application_id: str, decision: Decision
    ) -> ProviderApplication: ...
