"""Collections under a mandate: the amount fits MaxAmount and the period's allowance (a
ledger reservation), a one-time mandate permits one outstanding or completed collection,
`merchantReferenceId` replays or refuses, and a pending or uncertain provider outcome keeps
the money and the allowance until reconciliation settles it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import httpx
from fastapi import FastAPI

from finplat.kit.clock import set_clock
from finplat.reconciliation.service import reconcile
from tests.banking.steps import available
from tests.conftest import Tenant, TenantFactory
from tests.onboarding import set_fault
from tests.payments.steps import (
    active_mandate,
    collect,
    events_of,
    mandate,
    master_posted,
    read_mandate,
    receiver,
)


async def test_a_collection_moves_the_money_and_uses_the_allowance(
    api: httpx.AsyncClient,
) -> None:
    user, budget, active = await active_mandate(api)
    response = await collect(api, active["Id"], "30.00")
    assert response.status_code == 201, response.text
    collection = response.json()
    assert collection["Id"].startswith("col_")
    assert collection["Status"] == "COMPLETED"
    assert collection["MandateId"] == active["Id"]
    assert collection["merchantReferenceId"] == "ref-1"
    assert collection["FailureReason"] is None
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("970.00")
    assert await master_posted(api) == Decimal("30.00")
    assert (await read_mandate(api, active["Id"]))["RemainingThisPeriod"] == "70.00"
    tx = (await api.get(f"/api/v2/transactions/{collection['TransactionId']}")).json()
    assert tx["Type"] == "MANDATE_COLLECTION"
    assert tx["Status"] == "COMPLETED"
    assert len(await events_of(api, "collection.completed")) == 1
    read = await api.get(f"/api/v2/payments/collections/{collection['Id']}")
    assert read.json() == collection


async def test_beyond_the_periods_allowance_is_409_and_moves_nothing(
    api: httpx.AsyncClient,
) -> None:
    user, budget, active = await active_mandate(api)
    assert (await collect(api, active["Id"], 60, "a")).status_code == 201
    response = await collect(api, active["Id"], "40.01", "b")
    assert response.status_code == 409
    assert response.json()["Code"] == "MANDATE_ALLOWANCE_EXCEEDED"
    assert (await collect(api, active["Id"], 40, "c")).status_code == 201
    assert (await read_mandate(api, active["Id"]))["RemainingThisPeriod"] == "0.00"
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("900.00")


async def test_beyond_the_allowance_is_409_even_when_the_budget_cannot_pay_either(
    api: httpx.AsyncClient,
) -> None:
    _, _, active = await active_mandate(api, funds="70.00")
    assert (await collect(api, active["Id"], 60, "a")).status_code == 201
    response = await collect(api, active["Id"], 50, "b")
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "MANDATE_ALLOWANCE_EXCEEDED"
    assert "40.00 EUR" in response.json()["Message"]
    assert len(await events_of(api, "collection.failed")) == 0
    assert (await read_mandate(api, active["Id"]))["RemainingThisPeriod"] == "40.00"


async def test_more_than_max_amount_is_409(api: httpx.AsyncClient) -> None:
    _, _, active = await active_mandate(api)
    response = await collect(api, active["Id"], "100.01")
    assert response.status_code == 409
    assert response.json()["Code"] == "MANDATE_MAX_AMOUNT_EXCEEDED"


async def test_the_allowance_renews_with_the_next_period(api: httpx.AsyncClient) -> None:
    _, _, active = await active_mandate(api, Frequency="WEEKLY")
    assert (await collect(api, active["Id"], 100, "w1")).json()["Status"] == "COMPLETED"
    assert (await collect(api, active["Id"], 1, "w1b")).status_code == 409
    next_week = datetime.now(UTC) + timedelta(days=7)
    set_clock(lambda: next_week)
    assert (await read_mandate(api, active["Id"]))["RemainingThisPeriod"] == "100.00"
    assert (await collect(api, active["Id"], 100, "w2")).json()["Status"] == "COMPLETED"


async def test_a_one_time_mandate_permits_one_collection(api: httpx.AsyncClient) -> None:
    _, _, active = await active_mandate(api, Frequency="ONE_TIME")
    assert (await collect(api, active["Id"], 10, "once")).json()["Status"] == "COMPLETED"
    second = await collect(api, active["Id"], 10, "twice")
    assert second.status_code == 409
    assert second.json()["Code"] == "MANDATE_ALREADY_USED"
    assert (await read_mandate(api, active["Id"]))["RemainingThisPeriod"] == "0.00"


async def test_a_one_time_mandate_is_refused_while_its_collection_is_pending(
    api: httpx.AsyncClient,
) -> None:
    _, _, active = await active_mandate(api, Frequency="ONE_TIME")
    await set_fault(api, "bankprov", "collect", "pending")
    first = (await collect(api, active["Id"], 10, "once")).json()
    assert first["Status"] == "PENDING"
    second = await collect(api, active["Id"], 10, "twice")
    assert second.status_code == 409
    assert second.json()["Code"] == "MANDATE_ALREADY_USED"


async def test_a_failed_collection_frees_a_one_time_mandate(api: httpx.AsyncClient) -> None:
    _, _, active = await active_mandate(api, Frequency="ONE_TIME")
    await set_fault(api, "bankprov", "collect", "pending")
    first = (await collect(api, active["Id"], 10, "once")).json()
    settled = await api.post(
        f"/api/v2/sandbox/payments/collections/{first['Id']}/settlement",
        json={"Status": "FAILED", "Reason": "REFUSED_BY_PAYER_BANK"},
    )
    assert settled.status_code == 200, settled.text
    assert settled.json()["Status"] == "FAILED"
    assert settled.json()["FailureReason"] == "REFUSED_BY_PAYER_BANK"
    assert (await read_mandate(api, active["Id"]))["RemainingThisPeriod"] == "100.00"
    assert (await collect(api, active["Id"], 10, "again")).json()["Status"] == "COMPLETED"


async def test_an_empty_budget_fails_the_collection_insufficient_funds(
    api: httpx.AsyncClient,
) -> None:
    _, _, active = await active_mandate(api, funds="5.00")
    response = await collect(api, active["Id"], 10)
    assert response.status_code == 201, response.text
    assert response.json()["Status"] == "FAILED"
    assert response.json()["FailureReason"] == "INSUFFICIENT_FUNDS"
    assert (await read_mandate(api, active["Id"]))["RemainingThisPeriod"] == "100.00"
    assert len(await events_of(api, "collection.failed")) == 1
    assert await master_posted(api) == 0


async def test_the_same_reference_and_terms_replay_the_collection(
    api: httpx.AsyncClient,
) -> None:
    user, budget, active = await active_mandate(api)
    first = await collect(api, active["Id"], 10, "inv-1")
    again = await collect(api, active["Id"], "10.00", "inv-1")
    assert again.status_code == 201
    assert again.json() == first.json()
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("990.00")


async def test_the_same_reference_with_other_terms_is_400(api: httpx.AsyncClient) -> None:
    _, _, active = await active_mandate(api)
    assert (await collect(api, active["Id"], 10, "inv-1")).status_code == 201
    response = await collect(api, active["Id"], 11, "inv-1")
    assert response.status_code == 400
    assert response.json()["Code"] == "REFERENCE_REUSED_WITH_DIFFERENT_TERMS"


async def test_a_reference_retried_with_a_mandate_that_does_not_exist_is_400(
    api: httpx.AsyncClient,
) -> None:
    _, _, active = await active_mandate(api)
    assert (await collect(api, active["Id"], 10, "inv-1")).status_code == 201
    response = await collect(api, "mdt_" + "0" * 24, 10, "inv-1")
    assert response.status_code == 400, response.text
    assert response.json()["Code"] == "REFERENCE_REUSED_WITH_DIFFERENT_TERMS"


async def test_a_pending_mandate_cannot_be_collected(api: httpx.AsyncClient) -> None:
    user, _ = await receiver(api)
    created = await mandate(api, user["Id"])
    response = await collect(api, created["Id"])
    assert response.status_code == 409
    assert response.json()["Code"] == "MANDATE_NOT_ACTIVE"


async def test_a_cancelled_mandate_cannot_be_collected(api: httpx.AsyncClient) -> None:
    _, _, active = await active_mandate(api)
    await api.post(f"/api/v2/payments/mandates/{active['Id']}/cancel")
    response = await collect(api, active["Id"])
    assert response.status_code == 409
    assert response.json()["Code"] == "MANDATE_CANCELLED"


async def test_a_collection_pending_when_the_mandate_is_cancelled_fails_typed(
    api: httpx.AsyncClient,
) -> None:
    _, _, active = await active_mandate(api)
    await set_fault(api, "bankprov", "collect", "pending")
    pending = (await collect(api, active["Id"], 10)).json()
    await api.post(f"/api/v2/payments/mandates/{active['Id']}/cancel")
    settled = await api.post(
        f"/api/v2/sandbox/payments/collections/{pending['Id']}/settlement",
        json={"Status": "FAILED", "Reason": "MANDATE_CANCELLED"},
    )
    assert settled.json()["FailureReason"] == "MANDATE_CANCELLED"


async def test_an_expired_mandate_cannot_be_collected(api: httpx.AsyncClient) -> None:
    end = datetime.now(UTC).date() + timedelta(days=2)
    _, _, active = await active_mandate(api, EndDate=end.isoformat())
    later = datetime.combine(end + timedelta(days=1), datetime.min.time(), tzinfo=UTC)
    set_clock(lambda: later)
    response = await collect(api, active["Id"])
    assert response.status_code == 409
    assert response.json()["Code"] == "MANDATE_EXPIRED"


async def test_another_currency_is_409(api: httpx.AsyncClient) -> None:
    _, _, active = await active_mandate(api)
    response = await collect(api, active["Id"], Currency="GBP")
    assert response.status_code == 409
    assert response.json()["Code"] == "MANDATE_CURRENCY_MISMATCH"


async def test_a_pending_provider_outcome_keeps_money_and_allowance_until_settled(
    api: httpx.AsyncClient,
) -> None:
    user, budget, active = await active_mandate(api)
    await set_fault(api, "bankprov", "collect", "pending")
    pending = (await collect(api, active["Id"], 40)).json()
    assert pending["Status"] == "PENDING"
    assert (await read_mandate(api, active["Id"]))["RemainingThisPeriod"] == "60.00"
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("960.00")
    assert await master_posted(api) == 0
    settled = await api.post(
        f"/api/v2/sandbox/payments/collections/{pending['Id']}/settlement",
        json={"Status": "COMPLETED"},
    )
    assert settled.json()["Status"] == "COMPLETED"
    assert await master_posted(api) == Decimal("40.00")
    assert (await read_mandate(api, active["Id"]))["RemainingThisPeriod"] == "60.00"


async def test_a_provider_timeout_leaves_it_pending_and_reconciliation_settles_it(
    app: FastAPI, tenant: Tenant
) -> None:
    api = tenant.client
    user, budget, active = await active_mandate(api)
    await set_fault(api, "bankprov", "collect", "timeout")
    response = await collect(api, active["Id"], 25)
    assert response.status_code == 201, response.text
    lost = response.json()
    assert lost["Status"] == "PENDING"
    assert lost["StatusReason"] == "PROVIDER_OUTCOME_UNCERTAIN"
    assert (await read_mandate(api, active["Id"]))["RemainingThisPeriod"] == "75.00"
    assert await master_posted(api) == 0
    await set_fault(api, "bankprov", "collection_status", "transient", count=10)
    still = (await api.get(f"/api/v2/payments/collections/{lost['Id']}")).json()
    assert still["Status"] == "PENDING"
    await api.delete("/api/v2/sandbox/faults")
    report = await reconcile(
        app.state.session_factory, app.state.providers, company_id=tenant.company_id
    )
    assert [(s.transaction_id, s.status) for s in report.settled] == [
        (lost["TransactionId"], "COMPLETED")
    ]
    assert report.differences == []
    settled = (await api.get(f"/api/v2/payments/collections/{lost['Id']}")).json()
    assert settled["Status"] == "COMPLETED"
    assert settled["StatusReason"] is None
    assert await master_posted(api) == Decimal("25.00")
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("975.00")


async def test_another_companys_mandate_and_collection_are_404(
    api: httpx.AsyncClient, make_tenant: TenantFactory
) -> None:
    _, _, active = await active_mandate(api)
    collection = (await collect(api, active["Id"], 10)).json()
    other = (await make_tenant("Other Ltd")).client
    crossed = await collect(other, active["Id"], 10, "x")
    assert crossed.status_code == 404
    assert crossed.json()["Code"] == "MANDATE_NOT_FOUND"
    read = await other.get(f"/api/v2/payments/collections/{collection['Id']}")
    assert read.status_code == 404
    assert read.json()["Code"] == "COLLECTION_NOT_FOUND"
