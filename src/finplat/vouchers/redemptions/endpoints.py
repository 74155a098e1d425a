"""Redeeming vouchers: start with the voucher's code, verify with the one-time code."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import Query, Request, Response, status

from finplat.config import Settings
from finplat.errors import ValidationFailed, error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.money import CURRENCY_CODES, UnknownCurrency, normalize_currency
from finplat.vouchers import instants
from finplat.vouchers.redemptions import reports, service
from finplat.vouchers.redemptions.models import RedemptionStatus
from finplat.vouchers.redemptions.schemas import (
    OptionalUserIdQuery,
    RedemptionIdPath,
    RedemptionReportItem,
    RedemptionResponse,
    RedemptionStart,
    RedemptionVerify,
)

router = api_router(tags=["Vouchers"])


def _sandbox(request: Request) -> bool:
    settings: Settings = request.app.state.settings
    return settings.sandbox


@router.post(
    "/api/v2/vouchers/redemptions",
    response_model=RedemptionResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Start redeeming a voucher",
    description="Reserves one use of the voucher (and its value) for the user's card, and "
    "emails the user a one-time code: `PENDING_VERIFICATION` until it is verified, at most "
    "`VerificationTtlMinutes` (the sandbox shows the code at "
    "`GET /api/v2/sandbox/vouchers/redemptions/{id}/code`). A voucher without "
    "`RequiresEmail2Fa` goes on at once, as a verified one does. Refusals, each 409: "
    "`VOUCHERS_DISABLED`, `VOUCHERS_SHUT_DOWN`, `VOUCHER_EXPIRED`, `VOUCHER_NOT_YET_VALID`, "
    "`VOUCHER_EXHAUSTED`, `VOUCHER_USE_LIMIT_REACHED`, `VOUCHER_VALUE_CAP_REACHED`, "
    "`VOUCHER_PER_USER_LIMIT_REACHED`, `VOUCHER_CURRENCY_MISMATCH`; 404 `VOUCHER_NOT_FOUND` "
    "for a code the company never issued (the code is never echoed). Safe to retry with "
    "`Idempotency-Key`.",
    responses=error_responses(400, 404, 409, 503),
)
async def start_redemption(
    body: RedemptionStart,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> RedemptionResponse:
    claim = await claim_request(request, session, principal, idempotency_key)
    redemption = await service.start(
        session,
        providers,
        company_id=principal.company_id,
        sandbox=_sandbox(request),
        voucher_code=body.VoucherCode,
        user_id=body.UserId,
        card_id=body.CardId,
        claim=claim,
    )
    return RedemptionResponse.of(redemption)


@router.post(
    "/api/v2/vouchers/redemptions/{id}/verify",
    response_model=RedemptionResponse,
    summary="Verify a redemption with its one-time code",
    description="The right code goes on: a voucher that `RequiresWhitelabelApproval` waits "
    "`PENDING_APPROVAL`; otherwise the card is credited the voucher's value from the "
    "company's voucher funding account: `COMPLETED` with `TransactionReference`, or `FAILED` "
    "with `ErrorCode` when the card provider refuses (the use is given back), or "
    "`PROCESSING` while its answer is due (verify again, or read the redemption, to settle "
    "it). Not enough voucher funding: 409 `VOUCHER_FUNDING_INSUFFICIENT` (nothing changes; "
    "verify again once funded). A wrong code: 403 `INVALID_VERIFICATION_CODE`; the fifth "
    "fails the redemption, 409 `REDEMPTION_LOCKED`; too late: 409 `VERIFICATION_EXPIRED`. "
    "A redemption already decided is answered as it stands. With `userId`, the redemption "
    "must be that user's (404 otherwise).",
    responses=error_responses(400, 403, 404, 409, 503),
)
async def verify_redemption(
    id: RedemptionIdPath,
    body: RedemptionVerify,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    userId: OptionalUserIdQuery = None,
    idempotency_key: IdempotencyKeyHeader = None,
) -> RedemptionResponse:
    claim = await claim_request(request, session, principal, idempotency_key)
    redemption = await service.verify(
        session,
        providers,
        company_id=principal.company_id,
        sandbox=_sandbox(request),
        redemption_id=id,
        user_id=userId,
        code=body.Code,
        claim=claim,
    )
    return RedemptionResponse.of(redemption)


@router.post(
    "/api/v2/vouchers/redemptions/{id}/approve",
    response_model=RedemptionResponse,
    summary="Approve a redemption that waits for the company",
    description="For a voucher that `RequiresWhitelabelApproval`: the verified redemption "
    "(`PENDING_APPROVAL`) goes on, and the card is credited as after a verification "
    "(`COMPLETED`, `FAILED` or `PROCESSING`; 409 `VOUCHER_FUNDING_INSUFFICIENT` when the "
    "voucher funding cannot pay). Not yet verified: 409 `REDEMPTION_NOT_AWAITING_APPROVAL`. "
    "One already decided is answered as it stands. Safe to retry with `Idempotency-Key`.",
    responses=error_responses(400, 404, 409, 503),
)
async def approve_redemption(
    id: RedemptionIdPath,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> RedemptionResponse:
    claim = await claim_request(request, session, principal, idempotency_key)
    redemption = await service.approve(
        session,
        providers,
        company_id=principal.company_id,
        sandbox=_sandbox(request),
        redemption_id=id,
        claim=claim,
    )
    return RedemptionResponse.of(redemption)


@router.post(
    "/api/v2/vouchers/redemptions/{id}/reject",
    response_model=RedemptionResponse,
    summary="Reject a redemption that waits",
    description="A redemption waiting for its code or for the company's approval is "
    "`REJECTED` (`ErrorCode` `REJECTED_BY_COMPANY`) and its reservation released. One "
    "already decided is answered as it stands.",
    responses=error_responses(400, 404),
)
async def reject_redemption(
    id: RedemptionIdPath, session: DbSession, principal: CurrentPrincipal
) -> RedemptionResponse:
    redemption = await service.reject(session, company_id=principal.company_id, redemption_id=id)
    return RedemptionResponse.of(redemption)


@router.get(
    "/api/v2/vouchers/redemptions/{id}",
    response_model=RedemptionResponse,
    summary="A voucher redemption",
    description="One being credited (`PROCESSING`) is settled with the card provider first.",
    responses=error_responses(400, 404, 503),
)
async def get_redemption(
    id: RedemptionIdPath,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    userId: OptionalUserIdQuery = None,
) -> RedemptionResponse:
    redemption = await service.get(
        session, company_id=principal.company_id, redemption_id=id, user_id=userId
    )
    if redemption.row.status == RedemptionStatus.PROCESSING:
        redemption = await service.refresh(
            session, providers, row=redemption.row, voucher=redemption.voucher
        )
    return RedemptionResponse.of(redemption)


def _date_time_query(name: str) -> Any:
    return Query(
        alias=name,
        pattern=instants.RFC3339,
        description="A date-time with its offset, e.g. 2026-12-01T00:00:00Z.",
        json_schema_extra={"format": "date-time"},
    )


def _instant(value: str | None, name: str) -> datetime | None:
    if value is None:
        return None
    try:
        return instants.parse(value)
    except ValueError as exc:
        raise ValidationFailed(validation_errors={name: [str(exc)]}) from None


@router.get(
    "/api/v2/vouchers/reports/redemptions",
    response_model=list[RedemptionReportItem],
    summary="Redemption report",
    description="Every redemption created from `from` (inclusive) to `to` (exclusive), "
    "oldest first, optionally of one `status` and `currency`. With `Accept: text/csv`, the "
    "same rows as CSV with a header row, for finance teams. More than "
    f"{reports.MAX_ROWS} rows: 400 `REPORT_TOO_LARGE` (narrow the period).",
    responses={
        **error_responses(400),
        200: {"content": {"text/csv": {"schema": {"type": "string"}}}},
    },
)
async def redemption_report(
    request: Request,
    session: DbSession,
    principal: CurrentPrincipal,
    from_: Annotated[str | None, _date_time_query("from")] = None,
    to: Annotated[str | None, _date_time_query("to")] = None,
    status_: Annotated[RedemptionStatus | None, Query(alias="status")] = None,
    currency: Annotated[
        str | None,
        Query(
            description="ISO 4217 code, or USDC / USDT.",
            json_schema_extra={"enum": list(CURRENCY_CODES)},
        ),
    ] = None,
) -> list[RedemptionReportItem] | Response:
    code = None
    if currency is not None:
        try:
            code = normalize_currency(currency)
        except UnknownCurrency as exc:
            raise ValidationFailed(validation_errors={"currency": [str(exc)]}) from None
    rows = await reports.redemptions(
        session,
        company_id=principal.company_id,
        created_from=_instant(from_, "from"),
        created_to=_instant(to, "to"),
        status=status_.value if status_ is not None else None,
        currency=code,
    )
    if "text/csv" in request.headers.get("accept", ""):
        return Response(
            reports.as_csv(rows),
            media_type="text/csv",
            headers={"Content-Disposition": 'attachment; filename="voucher-redemptions.csv"'},
        )
    return [
        RedemptionReportItem(
            RedemptionId=r.redemption_id,
            VoucherId=r.voucher_id,
            VoucherName=r.voucher_name,
            UserId=r.user_id,
            Amount=r.amount,
            Currency=r.currency,
            Status=RedemptionStatus(r.status),
            ErrorCode=r.error_code,
            CreatedAt=r.created_at,
            CompletedAt=r.completed_at,
        )
        for r in rows
    ]
