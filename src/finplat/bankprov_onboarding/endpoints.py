"""Banking-provider onboarding of personal users (multipart), verification documents and
information requests."""

from __future__ import annotations

from fastapi import Request, status

from finplat.bankprov_onboarding import service
from finplat.bankprov_onboarding.schemas import (
    AnswersResult,
    DocumentsForm,
    DocumentUploadResult,
    InformationAnswers,
    InformationRequestResponse,
    OnboardingResult,
    OutstandingRequirements,
    PersonalOnboardingForm,
    documents_request_body,
    onboarding_request_body,
)
from finplat.documents.multipart import parse_fields, read_form, single_file
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.kit.schemas import UserIdPath, UserIdQuery
from finplat.providers.banking_onboarding.port import InformationAnswer

router = api_router(tags=["Banking-provider onboarding"])


@router.post(
    "/api/v2/banking/bankprov-onboarding",
    response_model=OnboardingResult,
    status_code=status.HTTP_202_ACCEPTED,
    summary="Submit a personal user's banking-provider onboarding",
    description="Multipart form. Needs a personal user (business users use the business "
    "application: 409 `BUSINESS_USER_NOT_ALLOWED`) whose base KYC is approved (409 "
    "`KYC_NOT_APPROVED`), on a tier with a banking-provider product (409 "
    "`TIER_EXCLUDES_BANKPROV`), and not submitted before (409 "
    "`BANKPROV_ONBOARDING_ALREADY_SUBMITTED`). The form is the spec's twelve fields; "
    "`ProofOfAddressDate` is an optional extra. `ProofOfAddress` is checked by its content "
    "(400 `INVALID_PROOF_OF_ADDRESS`) and must not be older than three months: by "
    "`ProofOfAddressDate` when given, else by the latest date the file records (400 "
    "`PROOF_OF_ADDRESS_TOO_OLD`), else the banking provider's review decides. Accepted "
    "applications are `PENDING` with the banking provider; status changes arrive as "
    "`account.status_updated` webhooks. After a 503, send the same request again: it completes "
    "the same provider application.",
    responses=error_responses(400, 404, 409, 503),
    openapi_extra=onboarding_request_body(),
)
async def submit_bankprov_onboarding(
    userId: UserIdQuery,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> OnboardingResult:
    form = await read_form(request, file_fields={"ProofOfAddress"})
    fields = parse_fields(PersonalOnboardingForm, form, required_files=["ProofOfAddress"])
    proof = single_file(form.files, "ProofOfAddress")
    application = await service.submit_personal_onboarding(
        session,
        providers,
        company_id=principal.company_id,
        user_id=userId,
        form=fields,
        proof=proof,
    )
    return OnboardingResult(
        Success=True,
        Message="The application was accepted; the banking provider is checking it.",
        CorrelationId=application.correlation_id,
        AccountId=application.provider_account_id,
    )


@router.post(
    "/api/v2/users/{userId}/kyc/bankprov/documents",
    response_model=DocumentUploadResult,
    summary="Upload verification documents to the banking provider",
    description="Multipart: 1 to 10 `Files` parts (or one legacy `File`), each a PDF, JPEG or "
    "PNG by its content (400 `INVALID_DOCUMENT`). They are merged in request order into one "
    "PDF sent to the banking provider. Needs a submitted onboarding (409 "
    "`BANKPROV_ONBOARDING_NOT_SUBMITTED`; 409 `BANKPROV_ONBOARDING_REJECTED` after a "
    "rejection). A user in `pending_documents` returns to `PENDING`. Sending the same files "
    "again returns the same document.",
    responses=error_responses(400, 404, 409, 503),
    openapi_extra=documents_request_body(),
)
async def upload_bankprov_documents(
    userId: UserIdPath,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> DocumentUploadResult:
    form = await read_form(request, file_fields={"Files", "File"})
    parse_fields(DocumentsForm, form)
    uploads = service.select_documents(form.files.get("Files", []), form.files.get("File", []))
    result = await service.upload_documents(
        session,
        providers,
        company_id=principal.company_id,
        user_id=userId,
        uploads=uploads,
    )
    return DocumentUploadResult(
        Success=True,
        DocumentId=result.document.provider_document_id,
        FileCount=result.document.file_count,
        PageCount=result.document.page_count,
        Status=result.status,
    )


@router.get(
    "/api/v2/users/{userId}/kyc/bankprov/information",
    response_model=OutstandingRequirements,
    summary="List the banking provider's outstanding requests",
    description="Unanswered information requests (some about a business-application person, "
    "`PersonId`) and whether documents are requested. 409 "
    "`BANKPROV_ONBOARDING_NOT_SUBMITTED` before the onboarding.",
    responses=error_responses(400, 404, 409, 503),
)
async def list_bankprov_information_requests(
    userId: UserIdPath, providers: CurrentProviders, session: DbSession, principal: CurrentPrincipal
) -> OutstandingRequirements:
    result = await service.outstanding(
        session, providers, company_id=principal.company_id, user_id=userId
    )
    return OutstandingRequirements(
        AccountId=result.account_id,
        Status=result.status,
        DocumentsRequired=result.outstanding.documents_required,
        Requests=[
            InformationRequestResponse.of(r, result.person_ids)
            for r in result.outstanding.information
        ],
    )


@router.post(
    "/api/v2/users/{userId}/kyc/bankprov/information",
    response_model=AnswersResult,
    summary="Answer the banking provider's information requests",
    description="Text answers to outstanding requests, including those about a "
    "business-application person. All answers are recorded or none: an unknown `RequestId` "
    "is 404 `INFORMATION_REQUEST_NOT_FOUND`, a request already answered differently 409 "
    "`INFORMATION_REQUEST_ALREADY_ANSWERED`; repeating an answer changes nothing. Once no "
    "document or answer is outstanding, a user in `pending_documents` returns to `PENDING`.",
    responses=error_responses(400, 404, 409, 503),
)
async def answer_bankprov_information_requests(
    userId: UserIdPath,
    body: InformationAnswers,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> AnswersResult:
    result = await service.answer_information(
        session,
        providers,
        company_id=principal.company_id,
        user_id=userId,
        answers=[InformationAnswer(a.RequestId, a.Answer) for a in body.Answers],
    )
    return AnswersResult(
        Success=True,
        Answered=len(body.Answers),
        AccountId=result.account_id,
        Status=result.status,
        DocumentsRequired=result.outstanding.documents_required,
        Requests=[
            InformationRequestResponse.of(r, result.person_ids)
            for r in result.outstanding.information
        ],
    )
