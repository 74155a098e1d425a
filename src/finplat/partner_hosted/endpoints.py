from __future__ import annotations

from fastapi import Request
from pydantic import Field

from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, DbSession, api_router
from finplat.kit.money import DecimalAmount
from finplat.kit.schemas import ResponseModel, UserIdPath
from finplat.partner_hosted import balances
from finplat.users import service as users

router = api_router(tags=["Partner-hosted balances"])


class PartnerBalanceResponse(ResponseModel):
    Currency: str
    Available: DecimalAmount = Field(description="What the user can spend, as the partner says.")
    Ledger: DecimalAmount | None = Field(description="The partner's booked balance, if it says.")


class PartnerBalances(ResponseModel):
    UserId: int
    ExternalUserId: str
    Source: str = Field(description="Always `PARTNER`: read from the partner just now.")
    Balances: list[PartnerBalanceResponse]


@router.get(
    "/api/v2/users/{userId}/partner-balances",
    response_model=PartnerBalances,
    summary="A partner-hosted user's balances, read from the partner",
    description="For a company with `PartnerHosted` balances: finplat asks the partner's "
    "`GET {BaseUrl}/balances/{ExternalUserId}` (signed, with the partner's `X-API-Key`) and "
    "answers what it says. 409 `PARTNER_HOSTED_NOT_CONFIGURED` when the company's balances "
    "are finplat's own (read them on the card); 503 `PARTNER_UNAVAILABLE` when the partner "
    "does not answer in `TimeoutMs` or with a usable answer.",
    responses=error_responses(404, 409, 503),
)
async def partner_balances(
    userId: UserIdPath, request: Request, session: DbSession, principal: CurrentPrincipal
) -> PartnerBalances:
    user = await users.get_user(session, company_id=principal.company_id, user_id=userId)
    found = await balances.read(
        session,
        company_id=principal.company_id,
        external_user_id=user.external_user_id,
        allow_loopback=bool(request.app.state.settings.allow_loopback_webhooks),
    )
    return PartnerBalances(
        UserId=user.id,
        ExternalUserId=user.external_user_id,
        Source="PARTNER",
        Balances=[
            PartnerBalanceResponse(Currency=b.currency, Available=b.available, Ledger=b.ledger)
            for b in found
        ],
    )
