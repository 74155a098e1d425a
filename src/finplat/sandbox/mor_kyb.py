"""Sandbox only: the banking provider's reviewers decide the MOR merchant's KYB, and the
decision reaches the platform as the provider's callback, through the same path as a real
one."""

from __future__ import annotations

from typing import Literal

from fastapi import Request

from finplat.config import Settings
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.kit.schemas import RequestModel
from finplat.mor.kyb import service as mor_kyb
from finplat.mor.kyb.schemas import MorKybResponse
from finplat.providers.sandbox import delivery as sandbox_delivery

router = api_router(tags=["Sandbox"])


class SandboxMorKybDecision(RequestModel):
    Outcome: Literal["APPROVED", "REJECTED", "NEEDS_INFO"]


@router.post(
    "/api/v2/sandbox/mor/kyb/decision",
    response_model=MorKybResponse,
    summary="Decide the MOR merchant's KYB (sandbox)",
    description="The provider's reviewers decide the KYB under review (409 "
    "`MOR_KYB_NOT_IN_REVIEW` otherwise, 404 before any submission); the answer shows the "
    "KYB once the provider's callbacks were applied.",
    responses=error_responses(400, 404, 409, 503),
)
async def sandbox_decide_mor_kyb(
    body: SandboxMorKybDecision,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> MorKybResponse:
    settings: Settings = request.app.state.settings
    await mor_kyb.decide_in_sandbox(
        session, providers, company_id=principal.company_id, outcome=body.Outcome
    )
    await session.commit()
    await sandbox_delivery.deliver_due(
        request.app.state.session_factory,
        secret=settings.provider_callback_secret,
        company_id=principal.company_id,
    )
    session.expire_all()
    return MorKybResponse.of(await mor_kyb.current(session, company_id=principal.company_id))
