"""Location insights: merchants ranked by transactions, users or points over a period."""

from __future__ import annotations

from datetime import timedelta

import httpx

from finplat.kit.clock import utcnow
from tests.factories import user_payload
from tests.loyalty.steps import (
    LOYALTY,
    cleared_purchase,
    csv_file,
    import_config,
    member_card,
    merchant,
    new_mid,
    program,
    upload,
)

INSIGHTS = f"{LOYALTY}/location-insights"


async def test_locations_are_ranked_by_the_metric(api: httpx.AsyncClient) -> None:
    owner = await program(api, PointsPerUnit=1)
    busy_mid, rich_mid = new_mid(), new_mid()
    busy = await merchant(api, owner["Id"], busy_mid, Name="Busy")
    rich = await merchant(api, owner["Id"], rich_mid, Name="Rich")
    card = await member_card(api)
    for _ in range(3):
        await cleared_purchase(api, card, 1, busy_mid)
    await cleared_purchase(api, card, 50, rich_mid)
    by_count = (await api.get(INSIGHTS, params={"metric": "transactions"})).json()
    by_points = (await api.get(INSIGHTS, params={"metric": "points", "period": "90d"})).json()
    assert [(t["MerchantId"], t["Value"]) for t in by_count["TopLocations"]] == [
        (busy["Id"], 3),
        (rich["Id"], 1),
    ]
    assert [(t["MerchantId"], t["Value"]) for t in by_points["TopLocations"]] == [
        (rich["Id"], 50),
        (busy["Id"], 3),
    ]
    assert (by_points["Period"], by_points["Metric"]) == ("90d", "points")
    assert by_points["GeneratedAt"]


async def test_the_defaults_are_30_days_and_transactions(api: httpx.AsyncClient) -> None:
    body = (await api.get(INSIGHTS)).json()
    assert (body["Period"], body["Metric"], body["TopLocations"]) == ("30d", "transactions", [])


async def test_users_count_distinct_users(api: httpx.AsyncClient) -> None:
    owner = await program(api)
    mid = new_mid()
    shop = await merchant(api, owner["Id"], mid)
    config = await import_config(api, owner["Id"])
    users = [(await api.post("/api/v2/users", json=user_payload())).json()["Id"] for _ in "ab"]
    when = (utcnow() - timedelta(days=1)).isoformat()
    text = csv_file(
        f"T1,{users[0]},{mid},1,USD,{when}",
        f"T2,{users[0]},{mid},1,USD,{when}",
        f"T3,{users[1]},{mid},1,USD,{when}",
    )
    assert (await upload(api, config["Id"], text)).status_code == 200
    body = (await api.get(INSIGHTS, params={"metric": "users"})).json()
    assert [(t["MerchantId"], t["Users"], t["Transactions"]) for t in body["TopLocations"]] == [
        (shop["Id"], 2, 3)
    ]


async def test_the_period_leaves_older_transactions_out(api: httpx.AsyncClient) -> None:
    owner = await program(api)
    mid = new_mid()
    await merchant(api, owner["Id"], mid)
    config = await import_config(api, owner["Id"])
    user = (await api.post("/api/v2/users", json=user_payload())).json()["Id"]
    old = (utcnow() - timedelta(days=60)).isoformat()
    assert (
        await upload(api, config["Id"], csv_file(f"T1,{user},{mid},1,USD,{old}"))
    ).status_code == 200
    assert (await api.get(INSIGHTS, params={"period": "30d"})).json()["TopLocations"] == []
    assert len((await api.get(INSIGHTS, params={"period": "90d"})).json()["TopLocations"]) == 1


async def test_a_refunded_purchase_no_longer_counts(api: httpx.AsyncClient) -> None:
    from tests.cards.transactions.steps import settle

    owner = await program(api)
    mid = new_mid()
    await merchant(api, owner["Id"], mid)
    card = await member_card(api)
    held = await cleared_purchase(api, card, 5, mid)
    await settle(api, card, held["AuthorizationId"], "refund", 5)
    assert (await api.get(INSIGHTS)).json()["TopLocations"] == []


async def test_an_unknown_period_or_metric_is_400(api: httpx.AsyncClient) -> None:
    period = await api.get(INSIGHTS, params={"period": "7d"})
    metric = await api.get(INSIGHTS, params={"metric": "revenue"})
    assert (period.status_code, list(period.json()["ValidationErrors"])) == (400, ["Period"])
    assert (metric.status_code, list(metric.json()["ValidationErrors"])) == (400, ["Metric"])
