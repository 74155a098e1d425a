"""Banking discovery: accounts, aggregated balance, budgets, banking details, assets."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Request, status

from finplat.banking import accounts, budgets, discovery
from finplat.banking.identifiers import BALANCE_ID_PATTERN
from finplat.banking.schemas import (
    AggregatedBalanceResponse,
    AssetResponse,
    AssetsResponse,
    BankingAccountResponse,
    BankingAccountsResponse,
    BankingInfoResponse,
    BudgetBalanceResponse,
    BudgetCreate,
    BudgetResponse,
    BudgetsResponse,
    CurrencyBalanceResponse,
)
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.schemas import UserIdPath, UserIdQuery
from finplat.providers.banking.port import BUDGET_CURRENCIES
from finplat.providers.registry import configured

router = api_router(tags=["Banking"])

BalanceIdPath = Annotated[
    str, Path(pattern=BALANCE_ID_PATTERN, description="The `BalanceId` the service returned.")
]


@router.get(
    "/api/v2/banking/accounts",
    response_model=BankingAccountsResponse,
    summary="List a user's provider accounts",
    description="Every account a provider has opened for the user, with its `Provider`.",
    responses=error_responses(400, 404),
)
async def list_banking_accounts(
    userId: UserIdQuery, session: DbSession, principal: CurrentPrincipal
) -> BankingAccountsResponse:
    rows = await discovery.provider_accounts(
        session, company_id=principal.company_id, user_id=userId
    )
    return BankingAccountsResponse(Accounts=[BankingAccountResponse.of(r) for r in rows])


@router.get(
    "/api/v2/banking/balance",
    response_model=AggregatedBalanceResponse,
    summary="A user's balance per currency, across providers",
    description="Every balance the user holds, summed per currency from the ledger: the "
    "budgets at the banking provider and the cards that are not cancelled, each card under the "
    "provider that issued it. `Providers` gives the available amount per provider.",
    responses=error_responses(400, 404),
)
async def aggregated_balance(
    userId: UserIdQuery, session: DbSession, principal: CurrentPrincipal
) -> AggregatedBalanceResponse:
    totals = await discovery.user_currency_totals(
        session, company_id=principal.company_id, user_id=userId
    )
    return AggregatedBalanceResponse(
        UserId=userId, Balances=[CurrencyBalanceResponse.of(t) for t in totals]
    )


@router.get(
    "/api/v2/banking/users/{userId}/budgets",
    response_model=BudgetsResponse,
    summary="List a user's budgets",
    description="The budgets of the user's banking-provider account, each with one balance "
    "per currency. Needs an active banking-provider account (409 "
    "`BANKING_ACCOUNT_NOT_ACTIVE`).",
    responses=error_responses(400, 404, 409, 503),
)
async def list_budgets(
    userId: UserIdPath, providers: CurrentProviders, session: DbSession, principal: CurrentPrincipal
) -> BudgetsResponse:
    views = await discovery.budget_views(
        session, providers, company_id=principal.company_id, user_id=userId
    )
    return BudgetsResponse(Budgets=[BudgetResponse.of(v) for v in views])


@router.post(
    "/api/v2/banking/users/{userId}/budgets",
    response_model=BudgetResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Open another budget",
    description="Opens a budget in the user's banking-provider account (`AccountId` from the "
    "accounts listing). Safe to retry with `Idempotency-Key`.",
    responses=error_responses(400, 404, 409, 503),
)
async def create_budget(
    userId: UserIdPath,
    body: BudgetCreate,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> BudgetResponse:
    account = await accounts.user_account(
        session, company_id=principal.company_id, user_id=userId, account_id=body.AccountId
    )
    banking = configured(providers.banking, discovery.NO_BANKING)
    currencies = list(dict.fromkeys(str(c) for c in body.Currencies or BUDGET_CURRENCIES))
    claim = await claim_request(request, session, principal, idempotency_key)
    budget = await budgets.create(
        session,
        banking,
        providers.policy,
        claim=claim,
        company_id=principal.company_id,
        account=account,
        name=body.Name,
        currencies=currencies,
    )
    views = await discovery.balance_views(
        session,
        [
            await accounts.budget_balance(
                session, company_id=principal.company_id, budget=budget, currency=c
            )
            for c in currencies
        ],
    )
    return BudgetResponse.of(discovery.BudgetView(budget, views))


@router.get(
    "/api/v2/banking/balances/{balanceId}",
    response_model=BudgetBalanceResponse,
    summary="One balance of a user's budget",
    responses=error_responses(400, 404),
)
async def get_balance(
    balanceId: BalanceIdPath, userId: UserIdQuery, session: DbSession, principal: CurrentPrincipal
) -> BudgetBalanceResponse:
    view = await discovery.balance_detail(
        session, company_id=principal.company_id, user_id=userId, balance_id=balanceId
    )
    return BudgetBalanceResponse.of_view(view)


@router.get(
    "/api/v2/banking/users/{userId}/bankprov-banking-info",
    response_model=BankingInfoResponse,
    summary="The user's IBAN, BIC and account details",
    description="How others pay into the user's banking-provider account. Needs an active "
    "account (409 `BANKING_ACCOUNT_NOT_ACTIVE`).",
    responses=error_responses(400, 404, 409, 503),
)
async def banking_info(
    userId: UserIdPath, providers: CurrentProviders, session: DbSession, principal: CurrentPrincipal
) -> BankingInfoResponse:
    details = await discovery.banking_details(
        session, providers, company_id=principal.company_id, user_id=userId
    )
    return BankingInfoResponse.of(details)


@router.get(
    "/api/v2/users/{userId}/assets",
    response_model=AssetsResponse,
    summary="What the user holds, per provider and currency",
    description="Every balance the user holds: each budget balance at the banking provider "
    "(`Source` BUDGET) and each card that is not cancelled (`Source` CARD, under the provider "
    "that issued it). Card balances are the platform's ledger, like `/banking/balance`.",
    responses=error_responses(400, 404),
)
async def user_assets(
    userId: UserIdPath, session: DbSession, principal: CurrentPrincipal
) -> AssetsResponse:
    held = await discovery.holdings(session, company_id=principal.company_id, user_id=userId)
    return AssetsResponse(
        UserId=userId,
        Assets=[AssetResponse.of(v) for v in held.budgets]
        + [AssetResponse.of_card(v) for v in held.cards],
    )
