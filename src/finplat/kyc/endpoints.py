from __future__ import annotations

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.auth.principal import Principal
from finplat.config import Settings
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.kit.schemas import UserIdPath
from finplat.kyc import service
from finplat.kyc.schemas import (
    DetailedStatusResponse,
    KycConfiguration,
    KycQuestionnaire,
    KycSessionResponse,
    ManualKycRequest,
    ReusableIdentityRequest,
    ShareTokenResponse,
)
from finplat.kyc.service import KycSession
from finplat.kyc.statuses import KycMethod
from finplat.providers.identity.port import IdentityDocument
from finplat.providers.registry import Providers
from finplat.provisioning import status_report

router = api_router(tags=["KYC"])
KYC_ERRORS = error_responses(400, 404, 409, 503)
ONE_METHOD = (
    " Each user has exactly one KYC method (hosted link, mobile SDK, reusable identity, manual "
    "payload): the first request fixes it, another method is 409 `KYC_METHOD_ALREADY_CHOSEN`. "
    "`KycStatus` moves from NOT_STARTED to PENDING; an approved user is 409 "
    "`KYC_ALREADY_APPROVED`, a rejected one 409 `KYC_REJECTED`. `Ssn` (9 digits) is required "
    "when the effective nationality (`Nationality`, else the user's `Country`) is US or USA: "
    "400 `SSN_REQUIRED`. The review arrives later from the provider; follow it with "
    "`GET /api/v2/users/{userId}/kyc/detailed-status` or the `kyc.status_updated` event."
)


def _base_url(request: Request) -> str:
    settings: Settings = request.app.state.settings
    return settings.public_base_url or str(request.base_url)


def _response(started: KycSession) -> KycSessionResponse:
    submission = started.submission
    return KycSessionResponse(
        Success=True,
        Method=KycMethod(submission.method),
        AccessToken=started.token.token if started.token else None,
        Url=started.token.url if started.token else None,
        ApplicantId=submission.applicant_id,
        ExternalUserId=started.user.external_user_id,
        KycSubmissionId=submission.id,
        Status=started.user.kyc_status,
        ExistingStatus=started.existing_status,
        ExpiresAt=started.token.expires_at if started.token else None,
        CreatedAt=submission.created_at,
        IsNewApplicant=started.is_new_applicant,
        Message=started.message,
        Configuration=KycConfiguration(levelName=submission.level_name),
    )


async def _start_with_token(
    method: KycMethod,
    user_id: int,
    body: KycQuestionnaire,
    request: Request,
    providers: Providers,
    session: AsyncSession,
    principal: Principal,
) -> KycSessionResponse:
    started = await service.start_with_token(
        session,
        providers,
        company_id=principal.company_id,
        user_id=user_id,
        method=method,
        request=body,
        base_url=_base_url(request),
    )
    return _response(started)


@router.post(
    "/api/v2/users/{userId}/sumsub/kyc-url",
    response_model=KycSessionResponse,
    summary="Create a hosted verification link",
    description="Creates (or continues) the user's applicant with the verification provider "
    "and returns a short-lived link to its hosted verification page." + ONE_METHOD,
    responses=KYC_ERRORS,
)
async def create_kyc_url(
    userId: UserIdPath,
    body: KycQuestionnaire,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> KycSessionResponse:
    return await _start_with_token(
        KycMethod.HOSTED_LINK, userId, body, request, providers, session, principal
    )


@router.post(
    "/api/v2/users/{userId}/kyc/sdk-token",
    response_model=KycSessionResponse,
    summary="Create a mobile SDK access token",
    description="A short-lived token for the verification provider's mobile SDK; the app "
    "submits the documents to the provider directly." + ONE_METHOD,
    responses=KYC_ERRORS,
)
async def create_sdk_token(
    userId: UserIdPath,
    body: KycQuestionnaire,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> KycSessionResponse:
    return await _start_with_token(
        KycMethod.MOBILE_SDK, userId, body, request, providers, session, principal
    )


@router.post(
    "/api/v2/users/{userId}/kyc/reusable-identity",
    response_model=KycSessionResponse,
    summary="Verify with a reusable identity",
    description="Reuses an identity the verification provider already verified (the person "
    "shares it with a share token). The provider approves it when the shared identity was "
    "approved and names and date of birth match; otherwise it rejects it. An unknown, "
    "expired or used token is the provider's 404 `SHARE_TOKEN_NOT_FOUND`." + ONE_METHOD,
    responses=KYC_ERRORS,
)
async def verify_with_reusable_identity(
    userId: UserIdPath,
    body: ReusableIdentityRequest,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> KycSessionResponse:
    started = await service.start_reusable_identity(
        session,
        providers,
        company_id=principal.company_id,
        user_id=userId,
        request=body,
        share_token=body.ShareToken,
    )
    return _response(started)


@router.post(
    "/api/v2/users/{userId}/kyc/manual",
    response_model=KycSessionResponse,
    summary="Submit a complete manual KYC payload",
    description="The questionnaire and the identity document's data in one request, for "
    "partners that collect documents themselves; the provider's reviewers decide." + ONE_METHOD,
    responses=KYC_ERRORS,
)
async def submit_manual_kyc(
    userId: UserIdPath,
    body: ManualKycRequest,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> KycSessionResponse:
    document = body.Document
    started = await service.start_manual(
        session,
        providers,
        company_id=principal.company_id,
        user_id=userId,
        request=body,
        document=IdentityDocument(
            type=document.Type,
            number=document.Number,
            issuing_country=document.IssuingCountry,
            issue_date=document.IssueDate,
            expiry_date=document.ExpiryDate,
        ),
    )
    return _response(started)


@router.post(
    "/api/v2/users/{userId}/kyc/share-token",
    response_model=ShareTokenResponse,
    summary="Issue a share token for a verified identity",
    description="A single-use, one-hour token another partner can pass to "
    "`POST /api/v2/users/{userId}/kyc/reusable-identity`. The user must be APPROVED (409 "
    "`KYC_NOT_APPROVED` otherwise).",
    responses=error_responses(400, 404, 409, 503),
)
async def issue_share_token(
    userId: UserIdPath, providers: CurrentProviders, session: DbSession, principal: CurrentPrincipal
) -> ShareTokenResponse:
    token = await service.issue_share_token(
        session, providers, company_id=principal.company_id, user_id=userId
    )
    return ShareTokenResponse(ShareToken=token.token, ExpiresAt=token.expires_at)


@router.get(
    "/api/v2/users/{userId}/kyc/detailed-status",
    response_model=DetailedStatusResponse,
    summary="Per-provider approval state",
    description="Base identity verification and each selected provider's own approval state.",
    responses=error_responses(400, 404),
)
async def kyc_detailed_status(
    userId: UserIdPath, session: DbSession, principal: CurrentPrincipal
) -> DetailedStatusResponse:
    report = await status_report.provider_statuses(
        session, company_id=principal.company_id, user_id=userId
    )
    return status_report.detailed_status(report)
