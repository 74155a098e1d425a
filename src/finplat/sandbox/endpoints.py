from __future__ import annotations

from typing import Annotated

from fastapi import Query, Request

from finplat.config import Settings
from finplat.errors import ValidationFailed, error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.money import UnknownCurrency, normalize_currency
from finplat.kit.schemas import UserIdPath
from finplat.kyc.schemas import DetailedStatusResponse, SandboxKycDecision
from finplat.ledger.schemas import BalanceResponse
from finplat.ledger.service import CompanyAccount
from finplat.providers.names import ExternalProvider
from finplat.providers.registry import configured
from finplat.providers.sandbox import faults
from finplat.providers.sandbox.operations import ProviderOperation
from finplat.provisioning.status_report import detailed_status, provider_statuses
from finplat.sandbox import funding
from finplat.sandbox import kyc as sandbox_kyc
from finplat.sandbox.faults import FaultList, FaultRequest, FaultResponse, FaultsCleared
from finplat.sandbox.schemas import FundingRequest, FundingResponse

router = api_router(tags=["Sandbox"])


@router.post(
    "/api/v2/sandbox/company/funding",
    response_model=FundingResponse,
    summary="Fund a company account (sandbox)",
    description="Credits the company's master account in `Currency` from the sandbox "
    "provider's settlement account, once the sandbox funding provider confirms the incoming "
    "transfer; `Account` `VOUCHERS` or `REWARDS` credits the account that pays redeemed "
    "vouchers or referral rewards instead. Safe to retry with `Idempotency-Key`. A funding "
    "that would take the account past the ledger's limit (10^18 minor units: 10^16 USD, "
    "10^12 USDC) is 409 `BALANCE_LIMIT_EXCEEDED`.",
    responses=error_responses(400, 409, 503),
)
async def fund_company(
    body: FundingRequest,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> FundingResponse:
    try:
        currency = normalize_currency(body.Currency)
    except UnknownCurrency as exc:
        raise ValidationFailed(validation_errors={"Currency": [str(exc)]}) from None
    money = funding.funding_amount(body.Amount, currency)
    rail = configured(providers.funding, "No funding provider is configured.")
    claim = await claim_request(request, session, principal, idempotency_key)
    result = await funding.fund_company(
        session,
        claim=claim,
        company_id=principal.company_id,
        money=money,
        rail=rail,
        policy=providers.policy,
        account=CompanyAccount[body.Account.value],
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


@router.put(
    "/api/v2/sandbox/faults",
    response_model=FaultResponse,
    summary="Make a provider operation fail (sandbox)",
    description="The next `Count` calls of `Operation` at `Provider`, made for this company, "
    "misbehave as `Mode` says. Replaces an earlier fault on the same operation.",
    responses=error_responses(400),
)
async def set_fault(
    body: FaultRequest, session: DbSession, principal: CurrentPrincipal
) -> FaultResponse:
    fault = await faults.set_fault(
        session,
        company_id=principal.company_id,
        provider=body.Provider.value,
        operation=body.Operation.value,
        mode=body.Mode,
        count=body.Count,
        http_status=body.HttpStatus,
    )
    return FaultResponse.of(fault)


@router.get(
    "/api/v2/sandbox/faults",
    response_model=FaultList,
    summary="List the faults still armed (sandbox)",
    responses=error_responses(),
)
async def list_faults(session: DbSession, principal: CurrentPrincipal) -> FaultList:
    armed = await faults.list_faults(session, company_id=principal.company_id)
    return FaultList(Faults=[FaultResponse.of(f) for f in armed])


@router.delete(
    "/api/v2/sandbox/faults",
    response_model=FaultsCleared,
    summary="Clear faults (sandbox)",
    description="Clears this company's faults: all, one provider's, or one operation's.",
    responses=error_responses(400),
)
async def clear_faults(
    session: DbSession,
    principal: CurrentPrincipal,
    provider: Annotated[ExternalProvider | None, Query(description="Only this provider's.")] = None,
    operation: Annotated[
        ProviderOperation | None, Query(description="Only this operation's.")
    ] = None,
) -> FaultsCleared:
    cleared = await faults.clear_faults(
        session,
        company_id=principal.company_id,
        provider=provider.value if provider else None,
        operation=operation.value if operation else None,
    )
    return FaultsCleared(Cleared=cleared)


@router.post(
    "/api/v2/sandbox/users/{userId}/kyc/complete",
    response_model=DetailedStatusResponse,
    summary="Decide a verification (sandbox)",
    description="Without `Provider`, the verification provider decides the user's base "
    "identity verification (the user must have started KYC: 409 `KYC_NOT_STARTED`); with "
    "`Provider`, that provider decides its own onboarding checks (banking provider: the "
    "personal onboarding application or the business application; card and switch "
    "providers: the account, APPROVED or REJECTED only). The decision reaches the platform "
    "as a provider callback, through the same path as a real one; the response shows the "
    "states after it was applied.",
    responses=error_responses(400, 404, 409, 503),
)
async def complete_kyc(
    userId: UserIdPath,
    body: SandboxKycDecision,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> DetailedStatusResponse:
    settings: Settings = request.app.state.settings
    await sandbox_kyc.complete(
        session,
        providers,
        request.app.state.session_factory,
        secret=settings.provider_callback_secret,
        company_id=principal.company_id,
        user_id=userId,
        outcome=body.Outcome,
        provider=body.Provider,
    )
    report = await provider_statuses(session, company_id=principal.company_id, user_id=userId)
    return detailed_status(report)
