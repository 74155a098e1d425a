"""The sandbox's inbox for voucher redemptions: the one-time code a user was emailed."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from finplat.errors import NotFound, error_responses
from finplat.http.routing import CurrentPrincipal, DbSession, api_router
from finplat.kit.schemas import ResponseModel
from finplat.providers.messaging.sandbox.adapter import sent_code
from finplat.vouchers.redemptions import service as redemptions
from finplat.vouchers.redemptions.schemas import RedemptionIdPath

router = api_router(tags=["Sandbox"])


class CodeNotSent(NotFound):
    code = "CODE_NOT_SENT"
    message = "No one-time code was emailed for this redemption."


class SentCode(ResponseModel):
    RedemptionId: str = Field(json_schema_extra={"format": "uuid"})
    Code: str = Field(description="The one-time code the user was emailed.")
    Status: str
    ExpiresAt: datetime | None


@router.get(
    "/api/v2/sandbox/vouchers/redemptions/{id}/code",
    response_model=SentCode,
    summary="The one-time code a redemption emailed (sandbox)",
    description="What the user would read in their inbox: the code to verify the redemption "
    "with. 404 `CODE_NOT_SENT` for a redemption that needed none.",
    responses=error_responses(400, 404),
)
async def redemption_code(
    id: RedemptionIdPath, session: DbSession, principal: CurrentPrincipal
) -> SentCode:
    redemption = await redemptions.get(session, company_id=principal.company_id, redemption_id=id)
    code = await sent_code(session, company_id=principal.company_id, reference=id)
    if code is None:
        raise CodeNotSent()
    return SentCode(
        RedemptionId=id,
        Code=code,
        Status=redemption.row.status,
        ExpiresAt=redemption.row.expires_at,
    )
