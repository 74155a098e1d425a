"""Budget transfers and user-to-master transfers."""

from __future__ import annotations

from fastapi import Request, Response, status

from finplat.banking.discovery import NO_BANKING
from finplat.banking.transfers import service
from finplat.banking.transfers.schemas import (
    BudgetIdPath,
    BudgetTransferRequest,
    BudgetTransferResponse,
)
from finplat.errors import ValidationFailed, error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency import service as idempotency
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.schemas import UserIdQuery
from finplat.providers.registry import configured

router = api_router(tags=["Banking"])


def _destination_problems(body: BudgetTransferRequest) -> dict[str, list[str]]:
    """The cross-field rules the schema states with `anyOf` (pydantic does not check them)."""
    if body.ToMaster and body.DestinationBudgetId is not None:
        return {"DestinationBudgetId": ["Give either DestinationBudgetId or ToMaster: true."]}
    if not body.ToMaster and body.DestinationBudgetId is None:
        return {"DestinationBudgetId": ["Required unless ToMaster is true."]}
    if not body.ToMaster and body.ExternalReferenceId is not None:
        return {"ExternalReferenceId": ["Only for transfers to the master account."]}
    return {}


@router.post(
    "/api/v2/banking/budgets/{budgetId}/transfer",
    response_model=BudgetTransferResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Transfer between budgets, or from a budget to the company master account",
    description="Moves `Amount` of `Currency` from the budget in the path to "
    "`DestinationBudgetId` (another budget of the same account) or, with `ToMaster: true`, to "
    "the company's master account in that currency (a user-to-master transfer). `userId` "
    "(the target user) is required for API-key callers. `AccountId` and both budgets must "
    "belong to that user's banking-provider account: an id unknown to the company is 404, an "
    "id of another user or account 403 `CROSS_ACCOUNT_TRANSFER_NOT_ALLOWED`. More decimals "
    "than the currency allows (2; 6 for USDC and USDT) is 400 `INVALID_TRANSFER_REQUEST`; "
    "funds that do not cover the amount 409 `INSUFFICIENT_FUNDS`. The amount is reserved, "
    "then the provider moves it: `Status` `COMPLETED`, or `PENDING` (still reserved) when "
    "the provider's answer is outstanding; `GET /api/v2/transactions/{id}` follows it up. "
    "Safe to retry with `Idempotency-Key`; user-to-master transfers also with "
    "`ExternalReferenceId`.",
    responses=error_responses(400, 403, 404, 409, 503),
)
async def banking_budget_transfer(
    budgetId: BudgetIdPath,
    userId: UserIdQuery,
    body: BudgetTransferRequest,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> Response:
    problems = _destination_problems(body)
    if problems:
        raise ValidationFailed(validation_errors=problems)
    currency = str(body.Currency)
    money = service.transfer_money(body.Amount, currency)
    order = await service.resolve(
        session,
        company_id=principal.company_id,
        user_id=userId,
        account_id=body.AccountId,
        source_budget_id=budgetId,
        destination_budget_id=None if body.ToMaster else body.DestinationBudgetId,
        money=money,
        external_reference_id=body.ExternalReferenceId,
        reference=body.Reference,
    )
    banking = configured(providers.banking, NO_BANKING)
    claim = await claim_request(request, session, principal, idempotency_key)
    reference_claim = (
        await service.claim_reference(session, claim, order)
        if order.external_reference_id is not None
        else None
    )
    try:
        content = await service.execute(
            session,
            banking,
            providers.policy,
            claim=claim,
            reference_claim=reference_claim,
            order=order,
        )
    except Exception:
        if reference_claim is not None:
            # Like the request's key after a technical failure: a retry resumes at once. (A
            # reference already answered, or never committed, is left as it is: the release
            # is fenced by the claim's lease token.)
            await session.rollback()  # the request's work is discarded anyway
            await idempotency.release(request.app.state.session_factory, reference_claim)
        raise
    return Response(content, status_code=status.HTTP_201_CREATED, media_type=service.JSON)
