"""Voucher groups and issuing vouchers (platform administration routes)."""

from __future__ import annotations

from fastapi import Path, Request, status
from fastapi.responses import JSONResponse

from finplat.config import Settings
from finplat.errors import error_responses
from finplat.http.admin_routing import (
    CompanyIdQuery,
    CurrentAdmin,
    admin_router,
    claim_admin_request,
    target_company,
)
from finplat.http.routing import DbSession
from finplat.idempotency import service as idempotency
from finplat.idempotency.http import IdempotencyKeyHeader, RequestClaim
from finplat.kit.money import exact_json_numbers
from finplat.vouchers.groups import service
from finplat.vouchers.groups.schemas import VoucherGroupCreate, VoucherGroupResponse, VoucherIssue
from finplat.vouchers.schemas import IssuedVoucher, IssuedVouchers, VoucherResponse
from finplat.vouchers.settings import service as settings_service

router = admin_router(tags=["Voucher administration"])

KEYS = (
    "A platform operator key acts on the company named by `companyId`; a company key on its "
    "own (another `companyId` is 404)."
)
UUID_PATTERN = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"


def _sandbox(request: Request) -> bool:
    settings: Settings = request.app.state.settings
    return settings.sandbox


@router.post(
    "/api/v2/admin/vouchers/groups",
    response_model=VoucherGroupResponse,
    summary="Create a voucher group",
    description="A group holds vouchers and the defaults they are issued with. `Name` is "
    "required. Records `voucher.group.created`. Safe to retry with `Idempotency-Key`. " + KEYS,
    responses=error_responses(400, 404, 409),
)
async def create_group(
    body: VoucherGroupCreate,
    request: Request,
    session: DbSession,
    caller: CurrentAdmin,
    companyId: CompanyIdQuery = None,
    idempotency_key: IdempotencyKeyHeader = None,
) -> VoucherGroupResponse:
    company_id = await target_company(session, caller, companyId)
    await claim_admin_request(request, session, caller, company_id=company_id, key=idempotency_key)
    effective = await settings_service.for_company(
        session, sandbox=_sandbox(request), company_id=company_id
    )
    group = await service.create_group(
        session,
        company_id=company_id,
        draft=body.draft(),
        default_requires_approval=effective.values.default_requires_approval,
    )
    return VoucherGroupResponse.of(group)


@router.post(
    "/api/v2/admin/vouchers/groups/{groupId}/vouchers",
    response_model=IssuedVouchers,
    status_code=status.HTTP_201_CREATED,
    summary="Issue vouchers into a group",
    description="Issues `Count` vouchers with the group's defaults, each field sent replacing "
    "the group's. Every voucher's code is drawn from a secure random source and answered in "
    "`PlaintextCode` this once: finplat keeps only its hash and `MaskedCode`. A retry with the "
    "same `Idempotency-Key` answers the same vouchers with `PlaintextCode` null (a code is "
    "never shown twice). More than the settings' `MaximumBatchSize`: 400 `BATCH_TOO_LARGE`; "
    "no value or currency here nor in the group: 400 `INVALID_VOUCHER_TERMS`. Records "
    "`voucher.issued`. " + KEYS,
    responses=error_responses(400, 404, 409),
)
async def issue_vouchers(
    body: VoucherIssue,
    request: Request,
    session: DbSession,
    caller: CurrentAdmin,
    groupId: str = Path(pattern=UUID_PATTERN, description="The group's `Id`."),
    companyId: CompanyIdQuery = None,
    idempotency_key: IdempotencyKeyHeader = None,
) -> IssuedVouchers:
    company_id = await target_company(session, caller, companyId)
    await claim_admin_request(request, session, caller, company_id=company_id, key=idempotency_key)
    effective = await settings_service.for_company(
        session, sandbox=_sandbox(request), company_id=company_id
    )
    overrides, sent = body.overrides()
    issued = await service.issue(
        session,
        company_id=company_id,
        group_id=groupId,
        count=body.Count,
        overrides=overrides,
        sent=sent,
        maximum_batch_size=effective.values.maximum_batch_size,
    )

    def answer(*, with_codes: bool) -> IssuedVouchers:
        return IssuedVouchers(
            GroupId=groupId,
            Count=len(issued),
            Vouchers=[
                IssuedVoucher(
                    **VoucherResponse.of(i.voucher).model_dump(),
                    PlaintextCode=i.plaintext_code if with_codes else None,
                )
                for i in issued
            ],
        )

    await _keep_for_replay_without_codes(request, session, answer(with_codes=False))
    return answer(with_codes=True)


async def _keep_for_replay_without_codes(
    request: Request, session: DbSession, replay: IssuedVouchers
) -> None:
    """Store the key's answer with the codes left out, in this transaction: the codes exist
    in the first response only, never at rest (the route would store the response as sent)."""
    held: RequestClaim | None = getattr(request.state, "idempotency", None)
    if held is None:
        return
    rendered = JSONResponse(replay.model_dump(mode="json"), status_code=status.HTTP_201_CREATED)
    await idempotency.complete(
        session,
        held.claim,
        status=status.HTTP_201_CREATED,
        body=exact_json_numbers(bytes(rendered.body)),
        content_type="application/json",
    )
    request.state.idempotency = None
