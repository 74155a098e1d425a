"""Crypto transfers: `GET /api/v2/crypto-virtual-accounts/transfers` and one transfer's
status, with `userId`."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

from finplat.crypto.exchange import service as exchange
from finplat.crypto.exchange.schemas import CryptoTransferResponse, TransferIdPath
from finplat.crypto.transfers import service
from finplat.crypto.transfers.models import TransferKind, TransferStatus
from finplat.crypto.transfers.schemas import CryptoTransferPage
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.kit.pagination import PageParams
from finplat.kit.schemas import UserIdQuery

router = api_router(tags=["Crypto"])


@router.get(
    "/api/v2/crypto-virtual-accounts/transfers",
    response_model=CryptoTransferPage,
    summary="List the user's crypto transfers",
    description="Every flow that took crypto out of the user's balance, newest first. "
    "`types` and `statuses` filter (repeat the parameter for several values). Statuses are "
    "as stored: read one transfer to refresh it from the rail. Incoming deposits are listed "
    "at `GET /api/v2/crypto-virtual-accounts/deposits`.",
    responses=error_responses(400, 404),
)
async def crypto_list_transfers(
    userId: UserIdQuery,
    session: DbSession,
    principal: CurrentPrincipal,
    page: PageParams,
    types: Annotated[
        list[TransferKind] | None, Query(description="Transfer types to include (all).")
    ] = None,
    statuses: Annotated[
        list[TransferStatus] | None, Query(description="Transfer statuses to include (all).")
    ] = None,
) -> CryptoTransferPage:
    rows = await service.transfers_of(
        session,
        company_id=principal.company_id,
        user_id=userId,
        kinds=[t.value for t in types or ()],
        statuses=[s.value for s in statuses or ()],
        page=page,
    )
    return CryptoTransferPage.of(rows, page, CryptoTransferResponse.of)


@router.get(
    "/api/v2/crypto-virtual-accounts/transfers/{transferId}",
    response_model=CryptoTransferResponse,
    summary="Get a crypto transfer's status",
    description="A pending transfer is refreshed from the rail first; if the rail cannot "
    "answer, the stored state is returned.",
    responses=error_responses(400, 404),
)
async def crypto_get_transfer(
    transferId: TransferIdPath,
    userId: UserIdQuery,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> CryptoTransferResponse:
    transfer = await exchange.transfer_of(
        session, providers, company_id=principal.company_id, user_id=userId, transfer_id=transferId
    )
    return CryptoTransferResponse.of(transfer)
