from __future__ import annotations

from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.kit.schemas import UserIdPath, UserIdQuery
from finplat.providers.names import BankProvider, provider_type
from finplat.provisioning import card_accounts
from finplat.provisioning.schemas import BankingProvidersResponse, ProviderAccountResponse
from finplat.provisioning.status_report import provider_statuses

router = api_router(tags=["Provisioning"])


@router.post(
    "/api/v2/users/create-cardprov-account/{userId}",
    response_model=ProviderAccountResponse,
    summary="Open (or repair) the user's card-provider account",
    description="Idempotent repair: opens the user's card-provider account if it is missing "
    "(for example after a provider outage during provisioning) and otherwise returns the "
    "existing one with `Created` false. The user's base KYC must be APPROVED (409 "
    "`KYC_NOT_APPROVED`) and the card provider must be the company's default or in the "
    "user's tier (409 `PROVIDER_NOT_SELECTED`).",
    responses=error_responses(400, 404, 409, 503),
)
async def create_cardprov_account(
    userId: UserIdPath, providers: CurrentProviders, session: DbSession, principal: CurrentPrincipal
) -> ProviderAccountResponse:
    result = await card_accounts.provision_card_account(
        session, providers, company_id=principal.company_id, user_id=userId
    )
    return ProviderAccountResponse(
        UserId=userId,
        Provider=BankProvider.CARDPROV,
        ProviderType=provider_type(BankProvider.CARDPROV),
        Status=result.account.status,
        AccountId=result.account.provider_account_id,
        Created=result.created,
    )


@router.get(
    "/api/v2/banking/providers",
    response_model=BankingProvidersResponse,
    summary="The user's providers and their approval states",
    description="Which providers the user is onboarded with (card, switch, banking) and each "
    "one's own approval state and account.",
    responses=error_responses(400, 404),
)
async def banking_providers(
    userId: UserIdQuery, session: DbSession, principal: CurrentPrincipal
) -> BankingProvidersResponse:
    report = await provider_statuses(session, company_id=principal.company_id, user_id=userId)
    return BankingProvidersResponse(UserId=report.user.id, Providers=report.providers)
