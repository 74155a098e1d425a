"""Identity verification (KYC) of a user, with the verification provider.

Rules (spec, "KYC session" and "States and transitions"):
* Exactly one of four methods per user: hosted link, mobile SDK token, reusable identity, or a
  complete manual payload. The first request fixes it; another method is 409.
* Starting moves `KycStatus` from NOT_STARTED to PENDING; `ExistingStatus` holds the status
  before the request; the access token is short-lived (`ExpiresAt`).
* `Ssn` is required as exactly 9 digits when the effective nationality (`Nationality`, else
  the user's `Country`) is US or USA. It goes to the verification provider as `tin` and is
  never stored here, returned or logged.
* The review arrives as the provider's `applicant.reviewed` callback (`apply_review`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TypeVar

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.errors import Conflict, ValidationFailed
from finplat.kyc import statuses
from finplat.kyc.applicant_reference import reference_of
from finplat.kyc.approval import KycNotApproved
from finplat.kyc.models import KycSubmission
from finplat.kyc.repository import KycSubmissionRepository
from finplat.kyc.schemas import US_NATIONALITIES, KycQuestionnaire
from finplat.kyc.statuses import KycMethod
from finplat.providers.calls import commit_then_call
from finplat.providers.identity.port import (
    AccessToken,
    Applicant,
    ApplicantData,
    IdentityDocument,
    IdentityVerification,
    ShareToken,
    TokenKind,
)
from finplat.providers.names import ExternalProvider
from finplat.providers.registry import Providers, configured
from finplat.provisioning import service as provider_accounts
from finplat.provisioning import statuses as provider_statuses
from finplat.provisioning.selection import selected_providers
from finplat.users import service as users
from finplat.users.models import User

T = TypeVar("T")
NO_IDENTITY_PROVIDER = "No identity verification provider is configured."
ACCESS_TOKEN_TTL = timedelta(minutes=10)
SHARE_TOKEN_TTL = timedelta(hours=1)
LEVELS = {"personal": "basic-kyc-level", "business": "business-representative-kyc-level"}
MESSAGES = {
    KycMethod.HOSTED_LINK: "Send the applicant to Url before ExpiresAt.",
    KycMethod.MOBILE_SDK: "Start the provider's mobile SDK with AccessToken before ExpiresAt.",
    KycMethod.REUSABLE_IDENTITY: "The provider is verifying the shared identity.",
    KycMethod.MANUAL: "The provider is reviewing the submitted document.",
}


class KycMethodAlreadyChosen(Conflict):
    code = "KYC_METHOD_ALREADY_CHOSEN"
    message = "This user is verified with another KYC method; each user has exactly one."


class KycAlreadyApproved(Conflict):
    code = "KYC_ALREADY_APPROVED"
    message = "The user's identity is already verified."


class KycRejected(Conflict):
    code = "KYC_REJECTED"
    message = "The user's identity verification was rejected; it cannot be restarted."


class KycNotStarted(Conflict):
    code = "KYC_NOT_STARTED"
    message = "The user has not started identity verification."


class KycInProgress(Conflict):
    code = "KYC_IN_PROGRESS"
    message = "Another KYC request for this user is being processed; retry shortly."


class SsnRequired(ValidationFailed):
    code = "SSN_REQUIRED"
    message = "Ssn is required (exactly 9 digits) when the effective nationality is US or USA."


@dataclass(frozen=True)
class KycSession:
    submission: KycSubmission
    user: User
    existing_status: str
    is_new_applicant: bool
    token: AccessToken | None
    message: str


def effective_nationality(request: KycQuestionnaire, user: User) -> str:
    return request.Nationality or user.country


def check_ssn(request: KycQuestionnaire, user: User) -> None:
    if effective_nationality(request, user) in US_NATIONALITIES and request.Ssn is None:
        raise SsnRequired(validation_errors={"Ssn": ["Required when the nationality is US."]})


def _identity(providers: Providers) -> IdentityVerification:
    return configured(providers.identity, NO_IDENTITY_PROVIDER)


async def _call(
    session: AsyncSession,
    providers: Providers,
    operation: str,
    call: Callable[[], Awaitable[T]],
) -> T:
    return await commit_then_call(
        session,
        providers.policy,
        provider=ExternalProvider.IDENTITY.value,
        operation=operation,
        call=call,
        idempotent=True,
    )


async def _startable(
    session: AsyncSession, *, company_id: int, user_id: int, method: KycMethod
) -> tuple[User, KycSubmission | None]:
    user = await users.get_user(session, company_id=company_id, user_id=user_id)
    submission = await KycSubmissionRepository(session, company_id).for_user(user_id)
    _check_startable(user, submission, method)
    return user, submission


def _check_startable(user: User, submission: KycSubmission | None, method: KycMethod) -> None:
    """A user starts (or restarts) KYC only with the method it was started with, and only
    while neither approved (409 `KYC_ALREADY_APPROVED`) nor finally rejected (409
    `KYC_REJECTED`)."""
    if submission is not None and submission.method != method.value:
        raise KycMethodAlreadyChosen(
            f"This user is verified with {submission.method}; each user has exactly one method."
        )
    if user.kyc_status == statuses.APPROVED:
        raise KycAlreadyApproved()
    if user.kyc_status == statuses.REJECTED:
        raise KycRejected()


async def _applicant(
    session: AsyncSession,
    providers: Providers,
    user: User,
    request: KycQuestionnaire,
) -> Applicant:
    check_ssn(request, user)
    questionnaire = {
        name: str(value)
        for name, value in request.model_dump(
            exclude_none=True, exclude={"Ssn", "Nationality", "ShareToken", "Document"}
        ).items()
    }
    data = ApplicantData(
        reference=reference_of(user),
        level_name=LEVELS[user.account_type],
        first_name=user.first_name,
        last_name=user.last_name,
        email=user.email,
        date_of_birth=user.date_of_birth,
        country=user.country,
        nationality=request.Nationality,
        tin=request.Ssn,
        questionnaire=questionnaire,
    )
    identity = _identity(providers)
    return await _call(
        session,
        providers,
        "create_applicant",
        lambda: identity.create_applicant(company_id=user.company_id, data=data),
    )


async def start_with_token(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    method: KycMethod,
    request: KycQuestionnaire,
    base_url: str,
) -> KycSession:
    """Hosted link (`HOSTED_LINK`) or mobile SDK token (`MOBILE_SDK`)."""
    user, _ = await _startable(session, company_id=company_id, user_id=user_id, method=method)
    applicant = await _applicant(session, providers, user, request)
    identity = _identity(providers)
    kind = TokenKind.HOSTED if method is KycMethod.HOSTED_LINK else TokenKind.SDK
    token = await _call(
        session,
        providers,
        "access_token",
        lambda: identity.access_token(
            company_id=company_id,
            applicant_id=applicant.applicant_id,
            kind=kind,
            ttl=ACCESS_TOKEN_TTL,
            base_url=base_url,
        ),
    )
    return await _record_start(session, user, method, applicant, token)


async def start_reusable_identity(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    request: KycQuestionnaire,
    share_token: str,
) -> KycSession:
    """Reuse an identity the provider verified elsewhere; its review follows as a callback."""

    def submit(identity: IdentityVerification, applicant_id: str) -> Awaitable[None]:
        return identity.import_shared_identity(
            company_id=company_id, applicant_id=applicant_id, share_token=share_token
        )

    return await _start_submitted(
        session,
        providers,
        company_id=company_id,
        user_id=user_id,
        method=KycMethod.REUSABLE_IDENTITY,
        request=request,
        operation="import_shared_identity",
        submit=submit,
    )


async def start_manual(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    request: KycQuestionnaire,
    document: IdentityDocument,
) -> KycSession:
    """A complete manual payload; the provider's reviewers decide, as a callback."""

    def submit(identity: IdentityVerification, applicant_id: str) -> Awaitable[None]:
        return identity.submit_document(
            company_id=company_id, applicant_id=applicant_id, document=document
        )

    return await _start_submitted(
        session,
        providers,
        company_id=company_id,
        user_id=user_id,
        method=KycMethod.MANUAL,
        request=request,
        operation="submit_document",
        submit=submit,
    )


async def _start_submitted(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    method: KycMethod,
    request: KycQuestionnaire,
    operation: str,
    submit: Callable[[IdentityVerification, str], Awaitable[None]],
) -> KycSession:
    user, _ = await _startable(session, company_id=company_id, user_id=user_id, method=method)
    applicant = await _applicant(session, providers, user, request)
    identity = _identity(providers)
    await _call(session, providers, operation, lambda: submit(identity, applicant.applicant_id))
    return await _record_start(session, user, method, applicant, None)


async def _record_start(
    session: AsyncSession,
    user: User,
    method: KycMethod,
    applicant: Applicant,
    token: AccessToken | None,
) -> KycSession:
    """After the provider answered: the submission, the user's status and each selected
    provider's approval move to PENDING, in one transaction, if the user may still start.
    A review that landed while the provider was called wins: approved meanwhile → 409
    `KYC_ALREADY_APPROVED`, rejected → 409 `KYC_REJECTED`, as a start after it would answer."""
    # The check before the provider call held no lock (none may be held across the call), so
    # it is repeated under the user's row lock, which `apply_review` takes too: without it a
    # review landing meanwhile was overwritten with PENDING, undoing an announced approval.
    await session.refresh(user, with_for_update=True)
    repo = KycSubmissionRepository(session, user.company_id)
    submission = await repo.for_user(user.id)
    _check_startable(user, submission, method)
    existing_status = user.kyc_status
    try:
        if submission is None:
            submission = await repo.add(
                KycSubmission(
                    user_id=user.id,
                    method=method.value,
                    applicant_id=applicant.applicant_id,
                    level_name=LEVELS[user.account_type],
                    status=statuses.PENDING,
                )
            )
        else:
            submission.status = statuses.PENDING
            submission.applicant_id = applicant.applicant_id
        user.kyc_status = statuses.PENDING
        await session.flush()
    except IntegrityError:
        raise KycInProgress() from None
    for provider in await selected_providers(session, user):
        account = await provider_accounts.find(
            session, company_id=user.company_id, user_id=user.id, provider=provider
        )
        if account is None or account.status == provider_statuses.NOT_STARTED:
            await provider_accounts.set_status(
                session,
                company_id=user.company_id,
                user_id=user.id,
                provider=provider,
                status=provider_statuses.PENDING,
            )
    return KycSession(
        submission=submission,
        user=user,
        existing_status=existing_status,
        is_new_applicant=applicant.is_new,
        token=token,
        message=MESSAGES[method],
    )


async def issue_share_token(
    session: AsyncSession, providers: Providers, *, company_id: int, user_id: int
) -> ShareToken:
    """A single-use token with which another partner can reuse this user's verified identity."""
    user = await users.get_user(session, company_id=company_id, user_id=user_id)
    submission = await KycSubmissionRepository(session, company_id).for_user(user_id)
    if submission is None or user.kyc_status != statuses.APPROVED:
        raise KycNotApproved("Only a user whose identity is verified can share it.")
    identity = _identity(providers)
    applicant_id = submission.applicant_id
    return await _call(
        session,
        providers,
        "share_token",
        lambda: identity.share_token(
            company_id=company_id, applicant_id=applicant_id, ttl=SHARE_TOKEN_TTL
        ),
    )


async def require_submission(
    session: AsyncSession, *, company_id: int, user_id: int
) -> KycSubmission:
    await users.get_user(session, company_id=company_id, user_id=user_id)
    submission = await KycSubmissionRepository(session, company_id).for_user(user_id)
    if submission is None:
        raise KycNotStarted()
    return submission
