"""Payouts to verified payees: check, initiate (approval), verify, create, read."""

from __future__ import annotations

from fastapi import Request, status

from finplat.banking import accounts
from finplat.banking.payouts import approvals, service
from finplat.banking.payouts.schemas import (
    ApprovalChallenge,
    ApprovalIdPath,
    ApprovalResponse,
    ApprovalVerification,
    PayoutCheckResponse,
    PayoutCreate,
    PayoutIdPath,
    PayoutResponse,
    PayoutTerms,
)
from finplat.banking.schemas import OptionalUserIdQuery
from finplat.errors import ServiceUnavailable, error_responses
from finplat.http import path_ids  # noqa: F401 - registers the {name:id} convertor
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.money import from_minor
from finplat.kit.schemas import UserIdQuery
from finplat.providers.errors import ProviderRejected, ProviderUnavailable
from finplat.transactions import refresh

router = api_router(tags=["Banking"])

TERMS_RULES = (
    "The user is the holder of `AccountId` (a banking account of the company's users); with "
    "`userId`, the account must be that user's (404 `ACCOUNT_NOT_FOUND` otherwise, as for an "
    "account that does not exist). `BudgetId` must be the user's (the budget in that account) "
    "and `PayeeId` one of the user's verified payees (404 otherwise; 409 "
    "`PAYEE_NOT_VERIFIED`); the payee's currency must be `Currency` (409 "
    "`PAYEE_CURRENCY_MISMATCH`) and the budget must hold `FromCurrency`, or `Currency` when it "
    "is omitted (409 `CURRENCY_NOT_IN_BUDGET`)."
)


async def _target_user(
    session: DbSession, principal: CurrentPrincipal, user_id: int | None, body: PayoutTerms
) -> int:
    """`userId` when given (the terms then check that the account is theirs), else the holder
    of `AccountId`."""
    if user_id is not None:
        return user_id
    return await accounts.holder_of(
        session, company_id=principal.company_id, account_id=body.AccountId
    )


async def _resolve(
    session: DbSession, principal: CurrentPrincipal, user_id: int, body: PayoutTerms
) -> service.Resolved:
    return await service.resolve(
        session,
        company_id=principal.company_id,
        user_id=user_id,
        account_id=body.AccountId,
        budget_id=body.BudgetId,
        payee_id=body.PayeeId,
        amount=body.Amount,
        currency=str(body.Currency),
        from_currency=str(body.FromCurrency) if body.FromCurrency is not None else None,
        reference=body.Reference,
    )


@router.post(
    "/api/v2/banking/payouts/check",
    response_model=PayoutCheckResponse,
    summary="Quote and check a payout",
    description="Prices the payout at the banking provider (fee of the payee's payment method; "
    "conversion when `FromCurrency` differs from `Currency`) and checks the budget's available "
    "funds. Changes nothing. " + TERMS_RULES,
    responses=error_responses(400, 404, 409, 503),
)
async def payouts_check(
    body: PayoutTerms,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    userId: OptionalUserIdQuery = None,
) -> PayoutCheckResponse:
    user_id = await _target_user(session, principal, userId, body)
    resolved = await _resolve(session, principal, user_id, body)
    checked = await service.check(
        session, providers, company_id=principal.company_id, resolved=resolved
    )
    price = checked.price
    debit = price.debit_currency
    return PayoutCheckResponse(
        Ok=checked.ok,
        Problems=checked.problems,
        Amount=from_minor(price.amount_minor, price.currency),
        Currency=price.currency,
        DebitAmount=from_minor(price.debit_amount_minor, debit),
        DebitCurrency=debit,
        Fee=from_minor(price.fee_minor, debit),
        FeeCurrency=debit,
        ExchangeRate=price.rate,
    )


@router.post(
    "/api/v2/banking/payouts/initiate",
    response_model=ApprovalChallenge,
    status_code=status.HTTP_201_CREATED,
    summary="Initiate a payout (approval with a one-time token)",
    description="Quotes and checks the payout like `check`, then stores an approval of these "
    "exact terms and price, valid 10 minutes, with a one-time `VerificationToken` for the user "
    "to confirm (`.../approvals/{approvalId}/verify`). Insufficient funds: 409 "
    "`INSUFFICIENT_FUNDS`. " + TERMS_RULES,
    responses=error_responses(400, 404, 409, 503),
)
async def payouts_initiate(
    body: PayoutTerms,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    userId: OptionalUserIdQuery = None,
    idempotency_key: IdempotencyKeyHeader = None,
) -> ApprovalChallenge:
    await claim_request(request, session, principal, idempotency_key)
    user_id = await _target_user(session, principal, userId, body)
    resolved = await _resolve(session, principal, user_id, body)
    approval, token = await service.initiate(
        session,
        providers,
        company_id=principal.company_id,
        user_id=user_id,
        resolved=resolved,
    )
    return ApprovalChallenge.issued(approval, token)


@router.post(
    "/api/v2/banking/payouts/approvals/{approvalId}/verify",
    response_model=ApprovalResponse,
    summary="Verify a payout approval with its token",
    description="The user confirms the payout with the approval's one-time token. A wrong token "
    "is 403 `INVALID_VERIFICATION_TOKEN`; the fifth wrong token locks the approval (409 "
    "`APPROVAL_LOCKED`). An expired approval is 409 `APPROVAL_EXPIRED`.",
    responses=error_responses(400, 403, 404, 409),
)
async def payouts_verify_approval(
    approvalId: ApprovalIdPath,
    userId: UserIdQuery,
    body: ApprovalVerification,
    session: DbSession,
    principal: CurrentPrincipal,
) -> ApprovalResponse:
    approval = await approvals.verify(
        session,
        company_id=principal.company_id,
        user_id=userId,
        approval_id=approvalId,
        token=body.VerificationToken,
    )
    return ApprovalResponse.of(approval)


@router.get(
    "/api/v2/banking/payouts/approvals/{approvalId}",
    response_model=ApprovalResponse,
    summary="A payout approval",
    responses=error_responses(400, 404),
)
async def payouts_get_approval(
    approvalId: ApprovalIdPath, userId: UserIdQuery, session: DbSession, principal: CurrentPrincipal
) -> ApprovalResponse:
    approval = await approvals.get(
        session, company_id=principal.company_id, user_id=userId, approval_id=approvalId
    )
    return ApprovalResponse.of(approval)


@router.post(
    "/api/v2/banking/payouts",
    response_model=PayoutResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Create a payout (needs its verified approval)",
    description="Pays a verified payee from a budget. API-key callers always need the "
    "payout's verified approval: `ApprovalId` of this user, `VERIFIED`, unexpired, unused, "
    "with exactly these terms (409 `APPROVAL_NOT_VERIFIED`, `APPROVAL_EXPIRED`, "
    "`APPROVAL_ALREADY_USED`, `APPROVAL_TERMS_MISMATCH`, `APPROVAL_LOCKED`; 404 "
    "`APPROVAL_NOT_FOUND`). The approved debit and fee are reserved in the budget, then the "
    "banking provider is asked to pay. The payout stays `PENDING` until the provider executes "
    "it; when the provider's answer is lost (timeout, outage) it is still answered `PENDING`, "
    "with `StatusReason` `PROVIDER_OUTCOME_UNCERTAIN`, the money stays reserved and "
    "reconciliation settles it. A provider refusal fails it and releases the money. If the "
    "budget no longer has the approved debit and fee available: 409 `INSUFFICIENT_FUNDS` (the "
    "approval stays usable). Safe to retry with `Idempotency-Key`. " + TERMS_RULES,
    responses=error_responses(400, 404, 409, 503),
)
async def payouts_create(
    body: PayoutCreate,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    userId: OptionalUserIdQuery = None,
    idempotency_key: IdempotencyKeyHeader = None,
) -> PayoutResponse:
    claim = await claim_request(request, session, principal, idempotency_key)
    user_id = await _target_user(session, principal, userId, body)
    tx = await service.create(
        session,
        providers,
        claim=claim,
        company_id=principal.company_id,
        user_id=user_id,
        approval_id=body.ApprovalId,
        resolve_terms=lambda: _resolve(session, principal, user_id, body),
    )
    return PayoutResponse.of(tx)


@router.get(
    # `:int`: only digits reach this route, so `/payouts/check` and `/payouts/initiate` stay
    # POST-only paths (their 405 names no GET) instead of payout ids of the wrong type.
    "/api/v2/banking/payouts/{payoutId:id}",
    response_model=PayoutResponse,
    summary="A payout, with its status refreshed from the provider",
    description="While the payout is `PENDING` the banking provider is asked for its state "
    "first; if the provider cannot be reached, the last known state is returned.",
    responses=error_responses(400, 404, 503),
)
async def payouts_get(
    payoutId: PayoutIdPath,
    userId: UserIdQuery,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> PayoutResponse:
    tx = await service.get_payout(
        session, company_id=principal.company_id, user_id=userId, payout_id=payoutId
    )
    try:
        if await refresh.refresh(session, providers, tx):
            tx = await service.get_payout(
                session, company_id=principal.company_id, user_id=userId, payout_id=payoutId
            )
    except (ProviderUnavailable, ProviderRejected, ServiceUnavailable):
        pass  # the provider cannot tell now: answer what is known
    return PayoutResponse.of(tx)
