"""The MOR merchant's transaction listing."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, DbSession
from finplat.kit.pagination import PageParams
from finplat.kit.schemas import MAX_ID, PARAMETER_ID
from finplat.mor.access import PREFIX, mor_router
from finplat.mor.filters import CurrencyQuery, FromQuery, ToQuery, currency_filter, instant
from finplat.mor.statement import service
from finplat.mor.statement.kinds import MorTransactionType
from finplat.mor.statement.repository import StatementFilter
from finplat.mor.statement.schemas import MorTransaction, MorTransactionPage

router = mor_router(tags=["MOR"])


@router.get(
    f"{PREFIX}/transactions",
    response_model=MorTransactionPage,
    summary="List the MOR merchant's transactions",
    description="Newest first: the wallet's movements (company fundings, card top-ups and "
    "unloads, fundings sent to child companies or received from the parent) and the "
    "merchant's cards' purchases and decline fees. Filter by `currency`, `types`, `from` "
    "(inclusive) and `to` (exclusive), `cardId` and `userId` (the merchant's own: another id "
    "is 404; with either, only card rows are left).",
    responses=error_responses(400, 404),
)
async def mor_transactions(
    session: DbSession,
    principal: CurrentPrincipal,
    page: PageParams,
    currency: CurrencyQuery = None,
    types: Annotated[
        list[MorTransactionType] | None, Query(description="Only these types.")
    ] = None,
    from_: FromQuery = None,
    to: ToQuery = None,
    cardId: Annotated[
        int | None, Query(ge=1, le=MAX_ID, description="Only this card's."), PARAMETER_ID
    ] = None,
    userId: Annotated[
        int | None,
        Query(ge=1, le=MAX_ID, description="Only this user's cards'."),
        PARAMETER_ID,
    ] = None,
) -> MorTransactionPage:
    where = StatementFilter(
        currency=currency_filter(currency),
        types=list(types or []),
        since=instant(from_, "from"),
        until=instant(to, "to"),
        card_id=cardId,
        user_id=userId,
    )
    found = await service.page(
        session,
        company_id=principal.company_id,
        where=where,
        offset=page.offset,
        limit=page.page_size + 1,
    )
    return MorTransactionPage(
        Items=[MorTransaction.of(row) for row in found[: page.page_size]],
        Page=page.page,
        PageSize=page.page_size,
        HasMore=len(found) > page.page_size,
    )
