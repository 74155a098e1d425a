from __future__ import annotations

from fastapi import Request

from finplat.companies import service
from finplat.companies.schemas import CompanyBalances, ConfigurationResponse, ConfigurationUpdate
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, DbSession, api_router
from finplat.ledger import service as ledger
from finplat.ledger.schemas import BalanceResponse
from finplat.partner_hosted import configuration as partner_hosted

router = api_router(tags=["Company"])


@router.get(
    "/api/v2/company/configuration",
    response_model=ConfigurationResponse,
    summary="The company's configuration",
    responses=error_responses(),
)
async def get_configuration(
    session: DbSession, principal: CurrentPrincipal
) -> ConfigurationResponse:
    company = await service.get_company(session, company_id=principal.company_id)
    hosted = await partner_hosted.current(session, company_id=principal.company_id)
    return ConfigurationResponse.of(company, partner_hosted=hosted)


@router.put(
    "/api/v2/company/configuration",
    response_model=ConfigurationResponse,
    summary="Change the webhook URL, rotate the webhook secret, set the default card provider "
    "or partner-hosted balances",
    description="The URL must be http(s) and resolve only to public addresses (loopback is "
    "accepted only when the development setting allows it). A rotated secret is returned "
    "once, in this response. `PartnerHosted` keeps the users' balances at the partner: their "
    "card purchases are decided by the partner's `POST {BaseUrl}/authorizations` within "
    "`TimeoutMs` (else `FallbackDecision`), and reversals, clearings, refunds and "
    "adjustments are sent to it; its `ApiKey` is stored encrypted and never returned.",
    responses=error_responses(400),
)
async def update_configuration(
    body: ConfigurationUpdate, request: Request, session: DbSession, principal: CurrentPrincipal
) -> ConfigurationResponse:
    company, secret = await service.update_configuration(
        session,
        company_id=principal.company_id,
        webhook_url=body.WebhookUrl,
        change_url="WebhookUrl" in body.model_fields_set,
        rotate_secret=body.RotateWebhookSecret,
        allow_loopback=bool(request.app.state.settings.allow_loopback_webhooks),
        default_card_provider=body.DefaultCardProvider.value if body.DefaultCardProvider else None,
    )
    allow_loopback = bool(request.app.state.settings.allow_loopback_webhooks)
    if "PartnerHosted" in body.model_fields_set:
        hosted = await partner_hosted.configure(
            session,
            company_id=principal.company_id,
            change=body.PartnerHosted.change() if body.PartnerHosted else None,
            allow_loopback=allow_loopback,
        )
    else:
        hosted = await partner_hosted.current(session, company_id=principal.company_id)
    return ConfigurationResponse.of(company, secret, partner_hosted=hosted)


@router.get(
    "/api/v2/company/balances",
    response_model=CompanyBalances,
    summary="The company's master account balances",
    responses=error_responses(),
)
async def company_balances(session: DbSession, principal: CurrentPrincipal) -> CompanyBalances:
    accounts = await ledger.company_accounts(
        session, company_id=principal.company_id, kind=ledger.CompanyAccount.MASTER
    )
    balances = await ledger.balances(session, company_id=principal.company_id, accounts=accounts)
    return CompanyBalances(Balances=[BalanceResponse.of(b) for b in balances])
