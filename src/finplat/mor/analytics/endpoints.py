"""Card analytics for the MOR merchant."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, DbSession
from finplat.kit.pagination import PageParams
from finplat.mor.access import PREFIX, mor_router
from finplat.mor.analytics import service
from finplat.mor.analytics.repository import MorSpendPeriod, Window
from finplat.mor.analytics.schemas import (
    MorSpendBucket,
    MorSpendByCardholder,
    MorSpendByCardholderPage,
    MorSpendByCategory,
    MorSpendByCategoryPage,
    MorSpendByPeriod,
)
from finplat.mor.filters import CurrencyQuery, FromQuery, ToQuery, currency_filter, instant

router = mor_router(tags=["MOR"])

RULES = (
    "Over the merchant's own card purchases: a purchase spends what cleared less what was "
    "refunded, and only cleared purchases count. Sums per currency. `from` (inclusive) and "
    "`to` (exclusive) bound when the purchase was first seen; `currency` keeps one currency."
)


def _window(currency: str | None, from_: str | None, to: str | None) -> Window:
    return Window(currency_filter(currency), instant(from_, "from"), instant(to, "to"))


@router.get(
    f"{PREFIX}/analytics/spend",
    response_model=MorSpendByPeriod,
    summary="Card spend by period",
    description="Spend per UTC day, ISO week (from Monday) or calendar month (`period`, "
    "default `DAY`). " + RULES,
    responses=error_responses(400),
)
async def mor_spend_by_period(
    session: DbSession,
    principal: CurrentPrincipal,
    period: Annotated[
        MorSpendPeriod, Query(description="The bucket: DAY, WEEK or MONTH.")
    ] = MorSpendPeriod.DAY,
    currency: CurrencyQuery = None,
    from_: FromQuery = None,
    to: ToQuery = None,
) -> MorSpendByPeriod:
    found = await service.by_period(
        session,
        company_id=principal.company_id,
        period=period,
        window=_window(currency, from_, to),
    )
    return MorSpendByPeriod(Period=period, Buckets=[MorSpendBucket.of(s) for s in found])


@router.get(
    f"{PREFIX}/analytics/spend/by-category",
    response_model=MorSpendByCategoryPage,
    summary="Card spend by merchant category (MCC)",
    description=RULES,
    responses=error_responses(400),
)
async def mor_spend_by_category(
    session: DbSession,
    principal: CurrentPrincipal,
    page: PageParams,
    currency: CurrencyQuery = None,
    from_: FromQuery = None,
    to: ToQuery = None,
) -> MorSpendByCategoryPage:
    found = await service.by_category(
        session,
        company_id=principal.company_id,
        window=_window(currency, from_, to),
        offset=page.offset,
        limit=page.page_size + 1,
    )
    return MorSpendByCategoryPage(
        Items=[MorSpendByCategory.of(s) for s in found[: page.page_size]],
        Page=page.page,
        PageSize=page.page_size,
        HasMore=len(found) > page.page_size,
    )


@router.get(
    f"{PREFIX}/analytics/spend/by-cardholder",
    response_model=MorSpendByCardholderPage,
    summary="Card spend by cardholder",
    description=RULES,
    responses=error_responses(400),
)
async def mor_spend_by_cardholder(
    session: DbSession,
    principal: CurrentPrincipal,
    page: PageParams,
    currency: CurrencyQuery = None,
    from_: FromQuery = None,
    to: ToQuery = None,
) -> MorSpendByCardholderPage:
    found = await service.by_cardholder(
        session,
        company_id=principal.company_id,
        window=_window(currency, from_, to),
        offset=page.offset,
        limit=page.page_size + 1,
    )
    return MorSpendByCardholderPage(
        Items=[MorSpendByCardholder.of(s) for s in found[: page.page_size]],
        Page=page.page,
        PageSize=page.page_size,
        HasMore=len(found) > page.page_size,
    )
