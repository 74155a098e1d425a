"""Voucher settings: the platform's, a company's own, and every company's in effect."""

from __future__ import annotations

from fastapi import Request

from finplat.config import Settings
from finplat.errors import error_responses
from finplat.http.admin_routing import (
    CompanyIdQuery,
    CurrentAdmin,
    admin_router,
    target_company,
)
from finplat.http.routing import DbSession
from finplat.idempotency.http import IdempotencyKeyHeader
from finplat.vouchers.settings import service
from finplat.vouchers.settings.schemas import (
    CompanyVoucherSettingsRequest,
    CompanyVoucherStatus,
    VoucherSettingsRequest,
    VoucherSettingsResponse,
)

router = admin_router(tags=["Voucher administration"])

KEYS = (
    "A platform operator key acts on any company (named by `companyId`); a company key on its "
    "own only (another `companyId` is 404, as a company that does not exist)."
)
PUT_IS_IDEMPOTENT = (
    " A PUT sets the values sent, so a retry has no further effect; `Idempotency-Key` is "
    "accepted and needs no record."
)


def _sandbox(request: Request) -> bool:
    settings: Settings = request.app.state.settings
    return settings.sandbox


@router.get(
    "/api/v2/admin/vouchers/settings/global",
    response_model=VoucherSettingsResponse,
    summary="Voucher settings in effect (platform view)",
    description="The platform's voucher settings, with the switches of the company named by "
    "`companyId` (a company key: its own). An operator without `companyId` sees a company "
    "that has set nothing of its own. " + KEYS,
    responses=error_responses(400, 404),
)
async def get_global_settings(
    request: Request, session: DbSession, caller: CurrentAdmin, companyId: CompanyIdQuery = None
) -> VoucherSettingsResponse:
    company_id = await _company_or_platform(session, caller, companyId)
    effective = await service.for_company(session, sandbox=_sandbox(request), company_id=company_id)
    return VoucherSettingsResponse.of(effective)


@router.put(
    "/api/v2/admin/vouchers/settings/global",
    response_model=VoucherSettingsResponse,
    summary="Change the platform's voucher settings (operator)",
    description="Only a platform operator key may: a company key is 403 "
    "`OPERATOR_KEY_REQUIRED`. `Enabled` is the platform's switch (`GlobalEnabled`); the other "
    "fields are what every company follows unless it set its own. `ShutdownMode` takes effect "
    "on the next start or verification. The answer shows a company that has set nothing of "
    "its own." + PUT_IS_IDEMPOTENT,
    responses=error_responses(400, 403, 404),
)
async def put_global_settings(
    body: VoucherSettingsRequest,
    request: Request,
    session: DbSession,
    caller: CurrentAdmin,
    idempotency_key: IdempotencyKeyHeader = None,
) -> VoucherSettingsResponse:
    caller.require_operator()
    effective = await service.change_global(
        session, sandbox=_sandbox(request), changes=body.changes()
    )
    return VoucherSettingsResponse.of(effective)


@router.get(
    "/api/v2/admin/vouchers/settings/company",
    response_model=VoucherSettingsResponse,
    summary="A company's voucher settings in effect",
    description=KEYS,
    responses=error_responses(400, 404),
)
async def get_company_settings(
    request: Request, session: DbSession, caller: CurrentAdmin, companyId: CompanyIdQuery = None
) -> VoucherSettingsResponse:
    company_id = await target_company(session, caller, companyId)
    effective = await service.for_company(session, sandbox=_sandbox(request), company_id=company_id)
    return VoucherSettingsResponse.of(effective)


@router.put(
    "/api/v2/admin/vouchers/settings/company",
    response_model=VoucherSettingsResponse,
    summary="Change a company's own voucher settings",
    description="`Enabled` is the company's switch (`CompanyEnabled`); a field the company "
    "has not set follows the platform's. `InterlaceEnabled` and the `Maximum*` limits are the "
    "operator's to set (a company key sending them: 403 `OPERATOR_KEY_REQUIRED`). Records "
    "`voucher.settings.updated`. " + KEYS + PUT_IS_IDEMPOTENT,
    responses=error_responses(400, 403, 404),
)
async def put_company_settings(
    body: CompanyVoucherSettingsRequest,
    request: Request,
    session: DbSession,
    caller: CurrentAdmin,
    companyId: CompanyIdQuery = None,
    idempotency_key: IdempotencyKeyHeader = None,
) -> VoucherSettingsResponse:
    company_id = await target_company(session, caller, companyId)
    changes = body.changes()
    if service.OPERATOR_ONLY_COMPANY_FIELDS & set(changes):
        caller.require_operator()
    effective = await service.change_company(
        session, sandbox=_sandbox(request), company_id=company_id, changes=changes
    )
    return VoucherSettingsResponse.of(effective)


@router.get(
    "/api/v2/admin/vouchers/company-statuses",
    response_model=list[CompanyVoucherStatus],
    summary="Every company's voucher state in effect",
    description="An operator key: every company, by `CompanyId`; a company key: its own "
    "company only.",
    responses=error_responses(),
)
async def company_statuses(
    request: Request, session: DbSession, caller: CurrentAdmin
) -> list[CompanyVoucherStatus]:
    statuses = await service.company_statuses(
        session, sandbox=_sandbox(request), company_id=caller.own_company_id
    )
    return [CompanyVoucherStatus.of(s) for s in statuses]


async def _company_or_platform(
    session: DbSession, caller: CurrentAdmin, company_id: int | None
) -> int | None:
    """The company whose switches to show: the named or own one; none for an operator that
    names none."""
    if caller.is_operator and company_id is None:
        return None
    return await target_company(session, caller, company_id)
