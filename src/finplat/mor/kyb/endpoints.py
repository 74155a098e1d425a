"""The MOR merchant's KYB (spec: `POST /api/v2/mor/public/kyb`) and its status."""

from __future__ import annotations

from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession
from finplat.mor.access import PREFIX, mor_router
from finplat.mor.kyb import service
from finplat.mor.kyb.schemas import MorKybRequest, MorKybResponse

router = mor_router(tags=["MOR"])


@router.post(
    f"{PREFIX}/kyb",
    response_model=MorKybResponse,
    summary="Submit or resubmit the MOR merchant's KYB",
    description="Sends the merchant's KYB to the banking provider for review (status "
    "SUBMITTED, event `mor.kyb.submitted`); the review follows as `mor.kyb.in_review`, then "
    "`mor.kyb.approved`, `mor.kyb.rejected` or `mor.kyb.needs_info`. Each missing required "
    "field is named in a 400 `VALIDATION_ERROR`. A resubmission is accepted after REJECTED "
    "or NEEDS_INFO; while under review it is 409 `MOR_KYB_PENDING`, once approved 409 "
    "`MOR_KYB_APPROVED`; a first application without `Ubos` is 409 `MOR_KYB_UBOS_REQUIRED`.",
    responses=error_responses(400, 409, 503),
)
async def mor_submit_kyb(
    body: MorKybRequest,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> MorKybResponse:
    kyb = await service.submit(session, providers, company_id=principal.company_id, data=body)
    return MorKybResponse.of(kyb)


@router.get(
    f"{PREFIX}/kyb",
    response_model=MorKybResponse,
    summary="The MOR merchant's KYB status",
    description="Status, submissions and the reviewers' reason; 404 `MOR_KYB_NOT_FOUND` "
    "before the first submission.",
    responses=error_responses(404),
)
async def mor_kyb_status(session: DbSession, principal: CurrentPrincipal) -> MorKybResponse:
    return MorKybResponse.of(await service.current(session, company_id=principal.company_id))
