"""Card analytics: cleared spend by period, by merchant category and by cardholder, per
currency, over the merchant's own purchases only."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from finplat.kit.clock import reset_clock, set_clock
from finplat.mor.access import PREFIX
from tests.cards.funding.steps import active_card, set_fees, topup
from tests.cards.transactions.steps import authorize, settle
from tests.conftest import Tenant, TenantFactory


@pytest.fixture
def at() -> Iterator[Any]:
    def move(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> None:
        instant = datetime(year, month, day, hour, minute, tzinfo=UTC)
        set_clock(lambda: instant)

    yield move
    reset_clock()


async def funded(api: httpx.AsyncClient) -> dict[str, Any]:
    card = await active_card(api, master=1000.0)
    await set_fees(api, card)
    assert (await topup(api, card, 200)).status_code == 200
    return card


async def cleared(
    api: httpx.AsyncClient, card: dict[str, Any], amount: float, mcc: str, refund: float = 0
) -> None:
    held = await authorize(api, card, amount, Mcc=mcc)
    assert held["Approved"], held
    assert (await settle(api, card, held["AuthorizationId"], "clear")).status_code == 200
    if refund:
        refunded = await settle(api, card, held["AuthorizationId"], "refund", refund)
        assert refunded.status_code == 200, refunded.text


async def seeded_purchases(api: httpx.AsyncClient, at: Any) -> tuple[dict[str, Any], ...]:
    first, second = await funded(api), await funded(api)
    at(2026, 3, 2, 10)  # a Monday
    await cleared(api, first, 10, "5812")
    at(2026, 3, 4, 23, 59)
    await cleared(api, first, 8, "5411", refund=3)
    held = await authorize(api, first, 50, Mcc="5411")  # held, not cleared: not spend yet
    assert held["Approved"]
    at(2026, 3, 9, 0, 0)  # the next Monday
    await cleared(api, second, 7, "5812")
    at(2026, 4, 1, 12)
    await cleared(api, second, 3, "5999")
    return first, second


def buckets(response: httpx.Response) -> list[tuple[str, float, int]]:
    assert response.status_code == 200, response.text
    return [(b["Start"], b["Spent"], b["Purchases"]) for b in response.json()["Buckets"]]


async def test_spend_by_day_week_and_month(mor_tenant: Tenant, at: Any) -> None:
    api = mor_tenant.client
    await seeded_purchases(api, at)
    spend = f"{PREFIX}/analytics/spend"
    assert buckets(await api.get(spend)) == [
        ("2026-03-02", 10, 1),
        ("2026-03-04", 5, 1),
        ("2026-03-09", 7, 1),
        ("2026-04-01", 3, 1),
    ]
    assert buckets(await api.get(spend, params={"period": "WEEK"})) == [
        ("2026-03-02", 15, 2),
        ("2026-03-09", 7, 1),
        ("2026-03-30", 3, 1),
    ]
    assert buckets(await api.get(spend, params={"period": "MONTH"})) == [
        ("2026-03-01", 22, 3),
        ("2026-04-01", 3, 1),
    ]


async def test_the_window_bounds_the_purchases_counted(mor_tenant: Tenant, at: Any) -> None:
    api = mor_tenant.client
    await seeded_purchases(api, at)
    window = {"from": "2026-03-04T00:00:00Z", "to": "2026-03-09T00:00:00Z", "period": "MONTH"}
    assert buckets(await api.get(f"{PREFIX}/analytics/spend", params=window)) == [
        ("2026-03-01", 5, 1)
    ]


async def test_spend_by_merchant_category_most_spent_first(mor_tenant: Tenant, at: Any) -> None:
    api = mor_tenant.client
    await seeded_purchases(api, at)
    response = await api.get(f"{PREFIX}/analytics/spend/by-category")
    assert response.status_code == 200, response.text
    assert [(i["Mcc"], i["Currency"], i["Spent"]) for i in response.json()["Items"]] == [
        ("5812", "USD", 17),
        ("5411", "USD", 5),
        ("5999", "USD", 3),
    ]


async def test_spend_by_cardholder(mor_tenant: Tenant, at: Any) -> None:
    api = mor_tenant.client
    first, second = await seeded_purchases(api, at)
    response = await api.get(f"{PREFIX}/analytics/spend/by-cardholder")
    assert response.status_code == 200, response.text
    assert [(i["UserId"], i["Spent"], i["Purchases"]) for i in response.json()["Items"]] == [
        (first["UserId"], 15, 2),
        (second["UserId"], 10, 2),
    ]


async def test_another_merchants_purchases_are_not_counted(
    mor_tenant: Tenant, make_tenant: TenantFactory, at: Any
) -> None:
    other = await make_tenant("Other merchant", mor=True)
    await seeded_purchases(other.client, at)
    for path in ("spend", "spend/by-category", "spend/by-cardholder"):
        body = (await mor_tenant.client.get(f"{PREFIX}/analytics/{path}")).json()
        assert body.get("Buckets", body.get("Items")) == [], path


async def test_a_currency_filter_keeps_one_currency(mor_tenant: Tenant, at: Any) -> None:
    api = mor_tenant.client
    await seeded_purchases(api, at)
    response = await api.get(f"{PREFIX}/analytics/spend", params={"currency": "EUR"})
    assert buckets(response) == []
