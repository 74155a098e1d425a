"""The redemption report: filters, the spec's fields, and a CSV form."""

from __future__ import annotations

import csv
import io
from typing import Any

import httpx
import pytest

from tests.cards.funding.steps import active_card
from tests.vouchers.steps import fund_vouchers, start, started, voucher

REPORT = "/api/v2/vouchers/reports/redemptions"
ITEM_FIELDS = {
    "RedemptionId",
    "VoucherId",
    "VoucherName",
    "UserId",
    "Amount",
    "Currency",
    "Status",
    "ErrorCode",
    "CreatedAt",
    "CompletedAt",
}


@pytest.fixture
async def card(api: httpx.AsyncClient) -> dict[str, Any]:
    card = await active_card(api, master=0)
    await fund_vouchers(api)
    return card


async def test_the_report_lists_redemptions_with_the_spec_fields(
    api: httpx.AsyncClient, card: dict[str, Any]
) -> None:
    done = await voucher(api, RequiresEmail2Fa=False, Value=5, Name="Done")
    waiting = await voucher(api, Value=7, Name="Waiting")
    await start(api, done["PlaintextCode"], card)
    await started(api, waiting["PlaintextCode"], card)
    response = await api.get(REPORT)
    assert response.status_code == 200, response.text
    items = response.json()
    assert [set(i) for i in items] == [ITEM_FIELDS, ITEM_FIELDS]
    assert [(i["VoucherName"], i["Status"], i["Amount"]) for i in items] == [
        ("Done", "COMPLETED", 5),
        ("Waiting", "PENDING_VERIFICATION", 7),
    ]
    assert items[0]["UserId"] == card["UserId"]


async def test_the_report_filters_by_status_currency_and_period(
    api: httpx.AsyncClient, card: dict[str, Any]
) -> None:
    done = await voucher(api, RequiresEmail2Fa=False, Value=5)
    waiting = await voucher(api, Value=7)
    await start(api, done["PlaintextCode"], card)
    await started(api, waiting["PlaintextCode"], card)
    completed = (await api.get(REPORT, params={"status": "COMPLETED"})).json()
    assert [i["Amount"] for i in completed] == [5]
    assert (await api.get(REPORT, params={"currency": "EUR"})).json() == []
    assert len((await api.get(REPORT, params={"currency": "USD"})).json()) == 2
    future = (await api.get(REPORT, params={"from": "2999-01-01T00:00:00Z"})).json()
    assert future == []
    past = (await api.get(REPORT, params={"to": "2000-01-01T00:00:00Z"})).json()
    assert past == []


async def test_the_report_refuses_bad_filters(api: httpx.AsyncClient) -> None:
    for params in (
        {"status": "DONE"},
        {"currency": "XXXX"},
        {"from": "yesterday"},
        {"to": "0.5"},
        {"to": "2026-01-01T00:00:00"},
        {"from": "2026-02-30T00:00:00Z"},
    ):
        response = await api.get(REPORT, params=params)
        assert response.status_code == 400, params


async def test_the_report_comes_as_csv_for_finance_teams(
    api: httpx.AsyncClient, card: dict[str, Any]
) -> None:
    done = await voucher(api, RequiresEmail2Fa=False, Value="5.50", Name="=HYPERLINK()")
    await start(api, done["PlaintextCode"], card)
    response = await api.get(REPORT, headers={"Accept": "text/csv"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert len(rows) == 1
    assert set(rows[0]) == ITEM_FIELDS
    assert rows[0]["Amount"] == "5.50"
    assert rows[0]["Status"] == "COMPLETED"
    assert rows[0]["VoucherName"] == "'=HYPERLINK()"


async def test_another_company_s_redemptions_are_not_in_the_report(
    api: httpx.AsyncClient, card: dict[str, Any], make_tenant: Any
) -> None:
    done = await voucher(api, RequiresEmail2Fa=False)
    await start(api, done["PlaintextCode"], card)
    other = await make_tenant("Other")
    assert (await other.client.get(REPORT)).json() == []


async def _low_funding_events(api: httpx.AsyncClient) -> list[dict[str, Any]]:
    events = await api.get("/api/v2/events", params={"type": "voucher.funding.low"})
    return list(events.json()["Items"])


async def test_low_funding_for_a_group_raises_one_event_when_it_crosses_the_mark(
    api: httpx.AsyncClient,
) -> None:
    card = await active_card(api, master=0)
    await fund_vouchers(api, 60)
    await api.put(
        "/api/v2/admin/vouchers/settings/company", json={"LowBalanceWarningPercentage": 50}
    )
    issued = await voucher(api, RequiresEmail2Fa=False, Value=10, MaximumTotalUses=10)
    for _ in range(2):
        assert (await start(api, issued["PlaintextCode"], card)).json()["Status"] == "COMPLETED"
    assert await _low_funding_events(api) == []  # 40 left for 80 to come: at the mark
    await start(api, issued["PlaintextCode"], card)  # 30 left for 70: below half
    await start(api, issued["PlaintextCode"], card)  # still low: no second event
    (event,) = await _low_funding_events(api)
    assert event["Data"]["groupId"] == issued["GroupId"]
    assert event["Data"]["available"] == 30
    assert event["Data"]["outstanding"] == 70
