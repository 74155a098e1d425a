from __future__ import annotations

from fastapi import Request

from finplat.errors import ServiceUnavailable, ValidationFailed, error_responses
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.money import UnknownCurrency, normalize_currency
from finplat.ledger.schemas import BalanceResponse
from finplat.routing import CurrentPrincipal, DbSession, api_router
from finplat.sandbox import funding
from finplat.sandbox.schemas import FundingRequest, FundingResponse

router = api_router(tags=["Sandbox"])


@router.post(
    "/api/v2/sandbox/company/funding",
    response_model=FundingResponse,
    summary="Fund the company's master account (sandbox)",
    description="Credits the company's master account in `Currency` from the sandbox "
    "provider's settlement account, once the sandbox funding provider confirms the incoming "
    "transfer. Safe to retry with `Idempotency-Key`.",
    responses=error_responses(400, 409, 503),
)
async def fund_company(
    body: FundingRequest,
    request: Request,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> FundingResponse:
    try:
        currency = normalize_currency(body.Currency)
    except UnknownCurrency as exc:
        raise ValidationFailed(validation_errors={"Currency": [str(exc)]}) from None
    money = funding.funding_amount(body.Amount, currency)
    rail = request.app.state.providers.funding
    if rail is None:
        raise ServiceUnavailable("No funding provider is configured.")
    claim = await claim_request(request, session, principal, idempotency_key)
    result = await funding.fund_company(
        session, claim=claim, company_id=principal.company_id, money=money, rail=rail
    )
    return FundingResponse(
        TransferId=result.transfer_id,
        Currency=result.money.currency,
        Amount=result.money.amount,
        Status="COMPLETED",
        ProviderReference=result.provider_reference,
        Balance=BalanceResponse.of(result.balance),
        CompletedAt=result.completed_at,
    )
