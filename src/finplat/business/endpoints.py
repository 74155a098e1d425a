"""Business onboarding (KYB) with the banking provider, for business users (query `userId`)."""

from __future__ import annotations

from fastapi import Request, status

from finplat.business import service
from finplat.business.schemas import (
    ApplicationDocumentForm,
    AssociatedPersonCreate,
    AssociatedPersonPage,
    AssociatedPersonResponse,
    BusinessApplicationCreate,
    BusinessApplicationResponse,
    BusinessDocumentResponse,
    ComplianceRequirements,
    ComplianceRequirementsResponse,
    PersonDocumentForm,
    PersonIdPath,
    UserIdQuery,
)
from finplat.documents import multipart
from finplat.documents.file_types import VERIFICATION_DOCUMENT_TYPES, UnreadableFile, identify
from finplat.errors import ValidationFailed, error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.kit.pagination import PageParams

router = api_router(tags=["Business onboarding"])

APPLICATION = "/api/v2/business/onboarding/application"
PEOPLE = "/api/v2/business/onboarding/associated-people"
ELIGIBILITY = (
    "The user must be a business user (409 `NOT_A_BUSINESS_USER`) whose identity verification "
    "is approved (409 `KYC_NOT_APPROVED`)."
)
EDITABLE = (
    "Only while the application is `draft` or `more_information_required` (409 "
    "`BUSINESS_APPLICATION_NOT_EDITABLE`); without an application 409 "
    "`BUSINESS_APPLICATION_REQUIRED`."
)
PROVIDER_ERRORS = (
    "A refusal by the banking provider keeps the provider's HTTP status, with `Code`, "
    "`ValidationErrors` and the provider's details in `Details`."
)
FILE_FIELD = "File"
DOCUMENT_FILE = multipart.document_file_schema(
    "The document: PDF, JPEG or PNG, recognised by its content (not its name), complete and "
    "readable."
)


class InvalidDocument(ValidationFailed):
    code = "INVALID_DOCUMENT"
    message = "The file is not a readable PDF, JPEG or PNG document."


@router.post(
    APPLICATION,
    response_model=BusinessApplicationResponse,
    summary="Create the business application",
    description="Creates the business's application with the banking provider, `draft`. "
    f"{ELIGIBILITY} One application per user (409 `BUSINESS_APPLICATION_EXISTS`; read it "
    "with GET). `Market` is `UK` or `EU`; when omitted it follows from "
    "`CountryOfIncorporation` (GB: UK; an EU member state: EU). Supplied values are kept as "
    f"sent. {PROVIDER_ERRORS}",
    responses=error_responses(400, 404, 409, 422, 503),
)
async def create_application(
    userId: UserIdQuery,
    body: BusinessApplicationCreate,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> BusinessApplicationResponse:
    application = await service.create_application(
        session, providers, company_id=principal.company_id, user_id=userId, data=body
    )
    return BusinessApplicationResponse.of(application)


@router.get(
    APPLICATION,
    response_model=BusinessApplicationResponse,
    summary="Get the business application",
    description="404 `BUSINESS_APPLICATION_NOT_FOUND` when the user has none yet.",
    responses=error_responses(400, 404, 409),
)
async def get_application(
    userId: UserIdQuery, session: DbSession, principal: CurrentPrincipal
) -> BusinessApplicationResponse:
    application = await service.get_application(
        session, company_id=principal.company_id, user_id=userId
    )
    return BusinessApplicationResponse.of(application)


@router.post(
    "/api/v2/business/onboarding/compliance/requirements",
    response_model=ComplianceRequirementsResponse,
    summary="Set the application's compliance requirements",
    description="Every field is optional; each request replaces the requirements sent before "
    f"and they are kept as sent. {ELIGIBILITY} {EDITABLE} {PROVIDER_ERRORS}",
    responses=error_responses(400, 404, 409, 422, 503),
)
async def set_compliance_requirements(
    userId: UserIdQuery,
    body: ComplianceRequirements,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> ComplianceRequirementsResponse:
    stored = await service.set_compliance_requirements(
        session, providers, company_id=principal.company_id, user_id=userId, data=body
    )
    return ComplianceRequirementsResponse.model_validate(
        {
            **stored.requirements.model_dump(exclude_unset=True),
            "ApplicationId": stored.application.id,
            "UpdatedAt": stored.application.updated_at,
        }
    )


@router.post(
    PEOPLE,
    response_model=AssociatedPersonResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Add an associated person",
    description="Adds a director, ultimate beneficial owner (UBO) or shareholder to the "
    "application; the banking provider creates the person and the platform then sends "
    "`person.created` (`data.personId`, `data.email`). `Email` is unique per application "
    f"(409 `ASSOCIATED_PERSON_EXISTS`). {ELIGIBILITY} {EDITABLE} {PROVIDER_ERRORS}",
    responses=error_responses(400, 404, 409, 422, 503),
)
async def add_person(
    userId: UserIdQuery,
    body: AssociatedPersonCreate,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> AssociatedPersonResponse:
    person = await service.add_person(
        session, providers, company_id=principal.company_id, user_id=userId, data=body
    )
    return AssociatedPersonResponse.of(person)


@router.get(
    PEOPLE,
    response_model=AssociatedPersonPage,
    summary="List the associated people",
    description="The application's people, oldest first. 404 `BUSINESS_APPLICATION_NOT_FOUND` "
    "when the user has no application.",
    responses=error_responses(400, 404, 409),
)
async def list_people(
    userId: UserIdQuery, page: PageParams, session: DbSession, principal: CurrentPrincipal
) -> AssociatedPersonPage:
    rows = await service.list_people(
        session, company_id=principal.company_id, user_id=userId, page=page
    )
    return AssociatedPersonPage.of(rows, page, AssociatedPersonResponse.of)


@router.post(
    f"{APPLICATION}/documents",
    response_model=BusinessDocumentResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Upload an application document",
    description="Multipart: `DocumentType` and one `File` (PDF, JPEG or PNG, checked by its "
    "content; otherwise 400 `INVALID_DOCUMENT`). Sending the same file of the same type "
    f"again answers with the document already sent. {ELIGIBILITY} {EDITABLE} "
    f"{PROVIDER_ERRORS}",
    responses=error_responses(400, 404, 409, 422, 503),
    openapi_extra=multipart.request_body(
        ApplicationDocumentForm, files={FILE_FIELD: DOCUMENT_FILE}, required_files=[FILE_FIELD]
    ),
)
async def upload_application_document(
    userId: UserIdQuery,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> BusinessDocumentResponse:
    form = await multipart.read_form(request, file_fields={FILE_FIELD})
    fields = multipart.parse_fields(ApplicationDocumentForm, form, required_files=[FILE_FIELD])
    content_type, data = _identified(form)
    document = await service.upload_document(
        session,
        providers,
        company_id=principal.company_id,
        user_id=userId,
        person_id=None,
        document_type=fields.DocumentType,
        content_type=content_type,
        content=data,
    )
    return BusinessDocumentResponse.of(document)


@router.post(
    f"{PEOPLE}/{{personId}}/documents",
    response_model=BusinessDocumentResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Upload an associated person's document",
    description="Multipart: `DocumentType` and one `File` (PDF, JPEG or PNG, checked by its "
    "content; otherwise 400 `INVALID_DOCUMENT`). `personId` must be a person of the user's "
    "application (404 `ASSOCIATED_PERSON_NOT_FOUND`). Sending the same file of the same type "
    f"again answers with the document already sent. {ELIGIBILITY} {EDITABLE} "
    f"{PROVIDER_ERRORS}",
    responses=error_responses(400, 404, 409, 422, 503),
    openapi_extra=multipart.request_body(
        PersonDocumentForm, files={FILE_FIELD: DOCUMENT_FILE}, required_files=[FILE_FIELD]
    ),
)
async def upload_person_document(
    personId: PersonIdPath,
    userId: UserIdQuery,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> BusinessDocumentResponse:
    form = await multipart.read_form(request, file_fields={FILE_FIELD})
    fields = multipart.parse_fields(PersonDocumentForm, form, required_files=[FILE_FIELD])
    content_type, data = _identified(form)
    document = await service.upload_document(
        session,
        providers,
        company_id=principal.company_id,
        user_id=userId,
        person_id=personId,
        document_type=fields.DocumentType,
        content_type=content_type,
        content=data,
    )
    return BusinessDocumentResponse.of(document)


def _identified(form: multipart.MultipartForm) -> tuple[str, bytes]:
    """The form's one file, identified by its bytes: (media type, bytes)."""
    files = form.files.get(FILE_FIELD, [])
    if len(files) != 1:
        raise ValidationFailed(validation_errors={FILE_FIELD: ["Send exactly one file."]})
    try:
        identified = identify(files[0].data, VERIFICATION_DOCUMENT_TYPES)
    except UnreadableFile as exc:
        raise InvalidDocument(validation_errors={FILE_FIELD: [str(exc)]}) from None
    return identified.type.media_type, files[0].data


@router.post(
    f"{APPLICATION}/submit",
    response_model=BusinessApplicationResponse,
    summary="Submit the business application",
    description="`draft` or `more_information_required` → `submitted`; the provider then "
    "reviews it (`in_review`, then `approved`, `rejected` or `more_information_required`, "
    "which can be submitted again). Needs at least one associated person and the compliance "
    f"requirements (409 `BUSINESS_APPLICATION_INCOMPLETE`). {ELIGIBILITY} {EDITABLE} "
    f"{PROVIDER_ERRORS}",
    responses=error_responses(400, 404, 409, 422, 503),
)
async def submit_application(
    userId: UserIdQuery,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> BusinessApplicationResponse:
    application = await service.submit(
        session, providers, company_id=principal.company_id, user_id=userId
    )
    return BusinessApplicationResponse.of(application)
