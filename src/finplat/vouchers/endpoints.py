"""The company's vouchers."""

from __future__ import annotations

from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, DbSession, api_router
from finplat.kit.pagination import PageParams
from finplat.vouchers import service
from finplat.vouchers.schemas import GroupIdQuery, VoucherPage, VoucherResponse

router = api_router(tags=["Vouchers"])


@router.get(
    "/api/v2/vouchers",
    response_model=VoucherPage,
    summary="List the company's vouchers",
    description="Oldest first, a page at a time; `groupId` narrows to one group. Codes are "
    "never listed: `MaskedCode` tells them apart. `Status` is `ACTIVE`, `EXHAUSTED` (uses or "
    "aggregate value spent), `SCHEDULED` (before `ValidFrom`) or `EXPIRED` (from "
    "`ValidUntil`).",
    responses=error_responses(400),
)
async def list_vouchers(
    page: PageParams,
    session: DbSession,
    principal: CurrentPrincipal,
    groupId: GroupIdQuery = None,
) -> VoucherPage:
    rows = await service.list_vouchers(
        session, company_id=principal.company_id, page=page, group_id=groupId
    )
    return VoucherPage(
        Items=[VoucherResponse.of(v) for v in rows.rows],
        Page=page.page,
        PageSize=page.page_size,
        HasMore=rows.has_more,
    )
