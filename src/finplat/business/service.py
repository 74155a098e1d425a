"""Business onboarding (KYB) with the banking provider.

Rules:
* Only business users whose base identity verification is approved may apply; one
  application per user (a second is 409; read it with GET).
* The market is `UK` or `EU`: as sent, or inferred from the country of incorporation.
* Compliance requirements, associated people and documents can be changed while the
  application is `draft` or `more_information_required`; submitting needs at least one
  associated person and the compliance requirements.
* Each provider call is made with the request's transaction committed and a provider key
  derived from stable data (the user, the application, the person's email, the file's
  bytes), so a retry after a lost answer gets the provider's first answer and completes the
  local write. Local state is written only after the provider accepted.
* Review outcomes arrive as `application.status_changed` callbacks (see `callbacks`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import partial

import structlog
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.business import statuses
from finplat.business.models import AssociatedPerson, BusinessApplication, BusinessDocument
from finplat.business.repository import (
    ApplicationRepository,
    DocumentRepository,
    PersonRepository,
)
from finplat.business.schemas import (
    AssociatedPersonCreate,
    BusinessApplicationCreate,
    ComplianceRequirements,
)
from finplat.errors import Conflict, NotFound, ServiceUnavailable
from finplat.kit.clock import utcnow
from finplat.kit.pagination import PageRequest, PageSlice, fetch_page
from finplat.kyc.approval import require_base_approval
from finplat.kyc.statuses import Outcome
from finplat.providers.banking_onboarding.port import SandboxDecisions
from finplat.providers.business_onboarding.port import (
    ApplicationDetails,
    BusinessOnboarding,
    BusinessOnboardingSimulation,
    Decision,
    DocumentUpload,
    PersonDetails,
)
from finplat.providers.calls import commit_then_call
from finplat.providers.names import BankProvider, ExternalProvider
from finplat.providers.registry import Providers, configured
from finplat.provisioning import service as provider_accounts
from finplat.provisioning import statuses as provider_statuses
from finplat.users import service as users
from finplat.users.models import User

BANKPROV = ExternalProvider.BANKPROV.value
BUSINESS = "business"
log = structlog.get_logger("finplat.business")

# What the sandbox's reviewers ask each associated person when they want more information.
RESUBMISSION_QUESTIONS = ("Describe your role in the business and your source of wealth.",)
_DECISIONS = {
    Outcome.APPROVED: Decision.APPROVED,
    Outcome.REJECTED: Decision.REJECTED,
    Outcome.RESUBMISSION: Decision.MORE_INFORMATION_REQUIRED,
}


class NotBusinessUser(Conflict):
    code = "NOT_A_BUSINESS_USER"
    message = "Business onboarding is for users whose AccountType is business."


class ApplicationExists(Conflict):
    code = "BUSINESS_APPLICATION_EXISTS"
    message = "The user already has a business application; read it with GET."


class ApplicationNotFound(NotFound):
    code = "BUSINESS_APPLICATION_NOT_FOUND"
    message = "The user has no business application."


class ApplicationRequired(Conflict):
    code = "BUSINESS_APPLICATION_REQUIRED"
    message = "Create the business application first."


class ApplicationNotEditable(Conflict):
    code = "BUSINESS_APPLICATION_NOT_EDITABLE"
    message = "The application can only change while it is draft or more_information_required."


class ApplicationIncomplete(Conflict):
    code = "BUSINESS_APPLICATION_INCOMPLETE"
    message = "The application needs at least one associated person and the compliance "
    "requirements before it is submitted."


class ApplicationNotSubmitted(Conflict):
    code = "BUSINESS_APPLICATION_NOT_SUBMITTED"
    message = "Only a submitted application can be decided."


class PersonExists(Conflict):
    code = "ASSOCIATED_PERSON_EXISTS"
    message = "A person with this Email is already on the application."


class PersonNotFound(NotFound):
    code = "ASSOCIATED_PERSON_NOT_FOUND"
    message = "No associated person with that id on the user's application."


@dataclass(frozen=True)
class StoredCompliance:
    application: BusinessApplication
    requirements: ComplianceRequirements


def _adapter(providers: Providers) -> BusinessOnboarding:
    return configured(
        providers.business_onboarding,
        "No banking provider is configured for business onboarding.",
    )


async def _business_user(session: AsyncSession, *, company_id: int, user_id: int) -> User:
    """The company's business user (404, 409) with approved base KYC (409)."""
    user = await users.get_user(session, company_id=company_id, user_id=user_id)
    if user.account_type != BUSINESS:
        raise NotBusinessUser()
    return await require_base_approval(session, company_id=company_id, user_id=user_id)


async def _application(
    session: AsyncSession, *, company_id: int, user_id: int, lock: bool = False
) -> BusinessApplication:
    """The business user's application (409 while there is none)."""
    await _business_user(session, company_id=company_id, user_id=user_id)
    application = await ApplicationRepository(session, company_id).for_user(user_id, lock=lock)
    if application is None:
        raise ApplicationRequired()
    return application


async def _editable(session: AsyncSession, *, company_id: int, user_id: int) -> BusinessApplication:
    application = await _application(session, company_id=company_id, user_id=user_id)
    _require_editable(application)
    return application


def _require_editable(application: BusinessApplication) -> None:
    if application.status not in statuses.EDITABLE:
        raise ApplicationNotEditable(
            f"The application is {application.status}; it can change only while it is draft "
            "or more_information_required."
        )


async def create_application(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    data: BusinessApplicationCreate,
) -> BusinessApplication:
    await _business_user(session, company_id=company_id, user_id=user_id)
    repo = ApplicationRepository(session, company_id)
    if await repo.for_user(user_id) is not None:
        raise ApplicationExists()
    adapter = _adapter(providers)
    market = data.market()
    details = ApplicationDetails(
        market=market,
        business_type=data.BusinessType,
        registered_name=data.RegisteredName,
        registration_number=data.RegistrationNumber,
        country_of_incorporation=data.CountryOfIncorporation,
        business_overview=data.BusinessOverview,
        industry_main=data.IndustryMain,
        industry_sub=data.IndustrySub,
        employee_count=data.EmployeeCount,
        incorporation_date=data.IncorporationDate,
        website=data.Website,
    )
    created = await commit_then_call(
        session,
        providers.policy,
        provider=BANKPROV,
        operation="create_application",
        call=lambda: adapter.create_application(
            company_id=company_id,
            idempotency_key=f"business-application:{user_id}",
            details=details,
        ),
        idempotent=True,
    )
    application = BusinessApplication(
        user_id=user_id,
        provider_application_id=created.application_id,
        status=statuses.DRAFT,
        market=market,
        business_type=data.BusinessType,
        country_of_incorporation=data.CountryOfIncorporation,
        registered_name=data.RegisteredName,
        registration_number=data.RegistrationNumber,
        business_overview=data.BusinessOverview,
        industry_main=data.IndustryMain,
        industry_sub=data.IndustrySub,
        employee_count=data.EmployeeCount,
        incorporation_date=data.IncorporationDate,
        website=data.Website,
        submissions=0,
    )
    try:
        return await repo.add(application)
    except IntegrityError:
        # A concurrent request created the user's application first.
        raise ApplicationExists() from None


async def get_application(
    session: AsyncSession, *, company_id: int, user_id: int
) -> BusinessApplication:
    user = await users.get_user(session, company_id=company_id, user_id=user_id)
    if user.account_type != BUSINESS:
        raise NotBusinessUser()
    application = await ApplicationRepository(session, company_id).for_user(user_id)
    if application is None:
        raise ApplicationNotFound()
    return application


async def set_compliance_requirements(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    data: ComplianceRequirements,
) -> StoredCompliance:
    """Replace the application's compliance requirements with `data`, kept as sent."""
    application = await _editable(session, company_id=company_id, user_id=user_id)
    adapter = _adapter(providers)
    requirements = data.model_dump(mode="json", exclude_unset=True)
    provider_application_id = application.provider_application_id
    await commit_then_call(
        session,
        providers.policy,
        provider=BANKPROV,
        operation="update_compliance",
        call=lambda: adapter.update_compliance(
            company_id=company_id,
            application_id=provider_application_id,
            requirements=requirements,
        ),
        idempotent=True,  # a replacement: repeating it changes nothing more
    )
    application = await _application(session, company_id=company_id, user_id=user_id, lock=True)
    application.compliance_requirements = json.dumps(requirements, separators=(",", ":"))
    application.updated_at = utcnow()
    await session.flush()
    return StoredCompliance(application, data)


def stored_requirements(application: BusinessApplication) -> ComplianceRequirements | None:
    if application.compliance_requirements is None:
        return None
    return ComplianceRequirements.model_validate_json(application.compliance_requirements)


async def add_person(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    data: AssociatedPersonCreate,
) -> AssociatedPerson:
    application = await _editable(session, company_id=company_id, user_id=user_id)
    people = PersonRepository(session, company_id)
    if await people.by_email(application.id, data.Email) is not None:
        raise PersonExists()
    adapter = _adapter(providers)
    provider_application_id = application.provider_application_id
    details = PersonDetails(
        first_name=data.FirstName,
        last_name=data.LastName,
        email=data.Email,
        role=data.Role,
        date_of_birth=data.DateOfBirth,
        nationality=data.Nationality,
        ownership_percentage=data.OwnershipPercentage,
    )
    created = await commit_then_call(
        session,
        providers.policy,
        provider=BANKPROV,
        operation="add_person",
        call=lambda: adapter.add_person(
            company_id=company_id,
            application_id=provider_application_id,
            idempotency_key=f"business-person:{application.id}:{data.Email}",
            person=details,
        ),
        idempotent=True,
    )
    percentage = data.OwnershipPercentage
    person = AssociatedPerson(
        application_id=application.id,
        provider_person_id=created.person_id,
        first_name=data.FirstName,
        last_name=data.LastName,
        email=data.Email,
        role=data.Role,
        ownership_hundredths=None if percentage is None else int(percentage * Decimal(100)),
        date_of_birth=data.DateOfBirth,
        nationality=data.Nationality,
    )
    try:
        return await people.add(person)
    except IntegrityError:
        raise PersonExists() from None


async def list_people(
    session: AsyncSession, *, company_id: int, user_id: int, page: PageRequest
) -> PageSlice[AssociatedPerson]:
    application = await get_application(session, company_id=company_id, user_id=user_id)
    stmt = PersonRepository(session, company_id).listing(application.id)
    return await fetch_page(session, stmt, page)


async def upload_document(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    person_id: int | None,
    document_type: str,
    content_type: str,
    content: bytes,
) -> BusinessDocument:
    """Send an (already identified) file to the provider for the application or one of its
    people. The same file of the same type for the same subject is one document: sending it
    again answers with the document already sent."""
    application = await _application(session, company_id=company_id, user_id=user_id)
    person: AssociatedPerson | None = None
    if person_id is not None:
        person = await PersonRepository(session, company_id).on_application(
            application.id, person_id
        )
        if person is None:
            raise PersonNotFound()
    _require_editable(application)
    digest = hashlib.sha256(content).hexdigest()
    upload_key = hashlib.sha256(
        f"{application.id}:{person_id or '-'}:{document_type}:{digest}".encode()
    ).hexdigest()
    documents = DocumentRepository(session, company_id)
    existing = await documents.by_upload_key(upload_key)
    if existing is not None:
        return existing
    adapter = _adapter(providers)
    upload = DocumentUpload(document_type=document_type, content_type=content_type, content=content)
    provider_application_id = application.provider_application_id
    if person is None:
        sent = await commit_then_call(
            session,
            providers.policy,
            provider=BANKPROV,
            operation="upload_application_document",
            call=lambda: adapter.upload_application_document(
                company_id=company_id,
                application_id=provider_application_id,
                idempotency_key=f"business-document:{upload_key}",
                document=upload,
            ),
            idempotent=True,
        )
    else:
        provider_person_id = person.provider_person_id
        sent = await commit_then_call(
            session,
            providers.policy,
            provider=BANKPROV,
            operation="upload_person_document",
            call=lambda: adapter.upload_person_document(
                company_id=company_id,
                application_id=provider_application_id,
                person_id=provider_person_id,
                idempotency_key=f"business-document:{upload_key}",
                document=upload,
            ),
            idempotent=True,
        )
    document = BusinessDocument(
        application_id=application.id,
        person_id=person_id,
        provider_document_id=sent.document_id,
        document_type=document_type,
        content_type=content_type,
        size_bytes=len(content),
        sha256=digest,
        upload_key=upload_key,
    )
    try:
        return await documents.add(document)
    except IntegrityError:
        # The same upload, sent concurrently, was recorded first.
        await session.rollback()
        found = await documents.by_upload_key(upload_key)
        if found is None:
            raise
        return found


async def submit(
    session: AsyncSession, providers: Providers, *, company_id: int, user_id: int
) -> BusinessApplication:
    """draft or more_information_required → submitted; the banking provider's approval state
    becomes PENDING (`account.status_updated`)."""
    application = await _editable(session, company_id=company_id, user_id=user_id)
    problems: dict[str, list[str]] = {}
    if not await PersonRepository(session, company_id).has_any(application.id):
        problems["AssociatedPeople"] = ["Add at least one associated person."]
    if application.compliance_requirements is None:
        problems["ComplianceRequirements"] = ["Send the compliance requirements."]
    if problems:
        raise ApplicationIncomplete(validation_errors=problems)
    adapter = _adapter(providers)
    submission = application.submissions + 1
    provider_application_id = application.provider_application_id
    accepted = await commit_then_call(
        session,
        providers.policy,
        provider=BANKPROV,
        operation="submit_application",
        call=lambda: adapter.submit_application(
            company_id=company_id,
            application_id=provider_application_id,
            idempotency_key=f"business-submission:{application.id}:{submission}",
        ),
        idempotent=True,
    )
    application = await _application(session, company_id=company_id, user_id=user_id, lock=True)
    application.submissions = max(application.submissions, submission)
    # The provider's in_review callback may already have been applied.
    if application.status in statuses.EDITABLE:
        application.status = statuses.SUBMITTED
    application.updated_at = utcnow()
    await session.flush()
    await provider_accounts.set_status(
        session,
        company_id=company_id,
        user_id=user_id,
        provider=BankProvider.BANKPROV,
        status=provider_statuses.PENDING,
        provider_account_id=accepted.account_id,
    )
    return application


async def complete_in_sandbox(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    outcome: Outcome,
) -> None:
    """Decide the user's submitted application as the sandbox provider's reviewers would. The
    outcome arrives as the provider's `application.status_changed` callback (delivered by the
    caller). RESUBMISSION also asks each associated person a question through the banking
    provider's information requests."""
    user = await users.get_user(session, company_id=company_id, user_id=user_id)
    application = await ApplicationRepository(session, company_id).for_user(user.id)
    if application is None or application.status not in statuses.UNDER_REVIEW:
        raise ApplicationNotSubmitted(
            "The user has no submitted business application to decide."
            if application is None
            else f"The application is {application.status}; only a submitted one is decided."
        )
    simulation = providers.business_onboarding
    if not isinstance(simulation, BusinessOnboardingSimulation):
        raise ServiceUnavailable("The banking provider is not a sandbox.")
    provider_application_id = application.provider_application_id
    decision = _DECISIONS[outcome]
    decided = await commit_then_call(
        session,
        providers.policy,
        provider=BANKPROV,
        operation="decide",
        call=lambda: simulation.decide(
            company_id=company_id, application_id=provider_application_id, decision=decision
        ),
        idempotent=False,
    )
    banking = providers.banking_onboarding
    if (
        outcome is Outcome.RESUBMISSION
        and decided.account_id is not None
        and isinstance(banking, SandboxDecisions)
    ):
        people = await PersonRepository(session, company_id).all_on(application.id)
        for person in people:
            await commit_then_call(
                session,
                providers.policy,
                provider=BANKPROV,
                operation="request_information",
                call=partial(
                    banking.request_information,
                    company_id,
                    decided.account_id,
                    RESUBMISSION_QUESTIONS,
                    person_id=person.provider_person_id,
                ),
                idempotent=False,
            )


async def person_ids(
    session: AsyncSession, *, company_id: int, provider_person_ids: Sequence[str]
) -> dict[str, int]:
    """Our person `Id` for each of the banking provider's person ids it names."""
    if not provider_person_ids:
        return {}
    people = await PersonRepository(session, company_id).by_provider_ids(provider_person_ids)
    return {person.provider_person_id: person.id for person in people}
