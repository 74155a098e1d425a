"""Crypto deposits and balances: `GET /api/v2/crypto-virtual-accounts/deposits`, one deposit,
and `GET /api/v2/crypto-virtual-accounts/balances`, all with `userId`."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

from finplat.crypto import balances
from finplat.crypto.deposits import service
from finplat.crypto.deposits.schemas import (
    CryptoBalance,
    CryptoBalances,
    DepositIdPath,
    DepositPage,
    DepositResponse,
    DepositStatusFilter,
)
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, DbSession, api_router
from finplat.kit.pagination import PageParams
from finplat.kit.schemas import UserIdQuery
from finplat.users import service as users

router = api_router(tags=["Crypto"])


@router.get(
    "/api/v2/crypto-virtual-accounts/deposits",
    response_model=DepositPage,
    summary="List the user's crypto deposits",
    description="Transfers seen at the user's pay-in addresses, newest first: pending ones "
    "with their confirmations so far, credited, reorganised away, and unsupported ones (a "
    "token or chain the address was not issued for). `statuses` filters (repeat it for "
    "several).",
    responses=error_responses(400, 404),
)
async def crypto_list_deposits(
    userId: UserIdQuery,
    session: DbSession,
    principal: CurrentPrincipal,
    page: PageParams,
    statuses: Annotated[
        list[DepositStatusFilter] | None,
        Query(description="Deposit statuses to include (all when omitted)."),
    ] = None,
) -> DepositPage:
    rows = await service.deposits_of(
        session,
        company_id=principal.company_id,
        user_id=userId,
        statuses=[s.value for s in statuses or ()],
        page=page,
    )
    return DepositPage.of(rows, page, DepositResponse.of)


@router.get(
    "/api/v2/crypto-virtual-accounts/deposits/{depositId}",
    response_model=DepositResponse,
    summary="Get a crypto deposit",
    description="One deposit of the user, with its confirmations and status.",
    responses=error_responses(400, 404),
)
async def crypto_get_deposit(
    depositId: DepositIdPath, userId: UserIdQuery, session: DbSession, principal: CurrentPrincipal
) -> DepositResponse:
    row = await service.deposit_of(
        session, company_id=principal.company_id, user_id=userId, deposit_id=depositId
    )
    return DepositResponse.of(row)


@router.get(
    "/api/v2/crypto-virtual-accounts/balances",
    response_model=CryptoBalances,
    summary="Get the user's crypto balances",
    description="USDC and USDT held for the user: credited deposits, less what flows took "
    "out; `PendingDebits` is reserved by flows still in progress.",
    responses=error_responses(400, 404),
)
async def crypto_balances(
    userId: UserIdQuery, session: DbSession, principal: CurrentPrincipal
) -> CryptoBalances:
    await users.get_user(session, company_id=principal.company_id, user_id=userId)
    found = await balances.balances_of(session, company_id=principal.company_id, user_id=userId)
    return CryptoBalances(UserId=userId, Balances=[CryptoBalance.of(b) for b in found])
