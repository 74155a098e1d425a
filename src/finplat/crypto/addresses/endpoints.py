"""Pay-in addresses: `POST /api/v2/crypto-virtual-accounts/payin-address?userId=` and the
user's list."""

from __future__ import annotations

from fastapi import Request

from finplat.crypto.addresses import service
from finplat.crypto.addresses.schemas import (
    PayinAddressList,
    PayinAddressRequest,
    PayinAddressResponse,
)
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.schemas import UserIdQuery
from finplat.providers.crypto.port import Chain, Stablecoin
from finplat.users import service as users

router = api_router(tags=["Crypto"])


@router.post(
    "/api/v2/crypto-virtual-accounts/payin-address",
    response_model=PayinAddressResponse,
    summary="Get the user's pay-in address for a stablecoin on a chain",
    description="The deposit address of the user for `crypto_currency` (USDC or USDT) on "
    "`chain_id` (1 Ethereum, -200 Tron, 137 Polygon, 42161 Arbitrum), both required; any other "
    "value is 400. The first request issues the address at the crypto rail; every later one, "
    "parallel ones included, answers the same address. The user must have passed identity "
    "verification (409 `KYC_NOT_APPROVED`). Send only the pair the address is for to it: a "
    "deposit of another token or on another chain is not credited, it is kept as an "
    "`UNSUPPORTED` deposit for recovery.",
    responses=error_responses(400, 404, 409, 502, 503),
)
async def crypto_payin_address(
    userId: UserIdQuery,
    body: PayinAddressRequest,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> PayinAddressResponse:
    await claim_request(request, session, principal, idempotency_key)
    row = await service.payin_address(
        session,
        providers,
        company_id=principal.company_id,
        user_id=userId,
        currency=Stablecoin(body.crypto_currency),
        chain=Chain(body.chain_id),
    )
    return PayinAddressResponse.of(row)


@router.get(
    "/api/v2/crypto-virtual-accounts/payin-addresses",
    response_model=PayinAddressList,
    summary="List the user's pay-in addresses",
    description="Every pay-in address issued to the user, oldest first.",
    responses=error_responses(400, 404),
)
async def crypto_payin_addresses(
    userId: UserIdQuery, session: DbSession, principal: CurrentPrincipal
) -> PayinAddressList:
    await users.get_user(session, company_id=principal.company_id, user_id=userId)
    rows = await service.addresses_of(session, company_id=principal.company_id, user_id=userId)
    return PayinAddressList(Addresses=[PayinAddressResponse.of(r) for r in rows])
