"""Crypto EDD: `POST /api/v2/crypto-virtual-accounts/verification/edd?userId=`."""

from __future__ import annotations

from fastapi import Request

from finplat.crypto.edd import service
from finplat.crypto.edd.schemas import EddRequest, EddResponse
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.schemas import UserIdQuery

router = api_router(tags=["Crypto"])


@router.post(
    "/api/v2/crypto-virtual-accounts/verification/edd",
    response_model=EddResponse,
    summary="Submit the user's enhanced due diligence for crypto",
    description="Every field is required (400 naming each missing one); `ProfessionalSalary` "
    "is `{AnnualAmount, Currency, Employer?}`, `FileUrls` https links. The answers are stored "
    "with the identity verification provider (the user must be verified: 409 "
    "`KYC_NOT_APPROVED`); a new submission replaces the last. The status shows as `CryptoEdd` "
    "in `GET /api/v2/users/{userId}/kyc/detailed-status`. Crypto flows of at least the "
    "configured threshold in one operation need it (409 `EDD_REQUIRED`).",
    responses=error_responses(400, 404, 409, 503),
)
async def crypto_edd(
    userId: UserIdQuery,
    body: EddRequest,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> EddResponse:
    await claim_request(request, session, principal, idempotency_key)
    recorded = await service.submit(
        session,
        providers,
        company_id=principal.company_id,
        user_id=userId,
        answers=body.provider_answers(),
    )
    return EddResponse(
        UserId=recorded.user_id, Status=recorded.status, SubmittedAt=recorded.submitted_at
    )
