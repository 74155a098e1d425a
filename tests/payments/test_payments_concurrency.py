"""Payments under real parallelism on PostgreSQL (skipped on SQLite, whose single writer
serialises them): the one-time rule, the period's allowance, a merchant reference and a
payment request's payment hold whatever runs at once, and the ledger verifies."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest

from finplat.ledger.verification import verify
from finplat.payments.requests.repository import PaymentRequestRepository
from tests.banking.steps import available
from tests.callbacks import signed
from tests.databases import backend
from tests.isolated import isolated
from tests.payments.steps import (
    active_mandate,
    collect,
    master_posted,
    read,
    read_mandate,
    receiver,
    requested,
)

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")


async def test_20_parallel_collections_on_a_one_time_mandate_accept_exactly_one() -> None:
    async with isolated("one-time-race", database_pool_size=30, run_background_jobs=False) as env:
        user, budget, active = await active_mandate(env.client, Frequency="ONE_TIME")
        responses = await asyncio.gather(
            *(collect(env.client, active["Id"], 10, f"once-{i}") for i in range(20))
        )
        statuses = sorted(r.status_code for r in responses)
        assert statuses == [201] + [409] * 19, [r.text for r in responses if r.status_code >= 500]
        refused = [r.json()["Code"] for r in responses if r.status_code == 409]
        assert set(refused) == {"MANDATE_ALREADY_USED"}
        assert await available(env.client, user["Id"], budget["BudgetId"], "EUR") == Decimal(
            "990.00"
        )
        assert await master_posted(env.client) == Decimal("10.00")
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok


async def test_20_parallel_collections_on_a_monthly_mandate_never_exceed_the_allowance() -> None:
    async with isolated("allowance-race", database_pool_size=30, run_background_jobs=False) as env:
        user, budget, active = await active_mandate(env.client, MaxAmount="100.00")
        responses = await asyncio.gather(
            *(collect(env.client, active["Id"], "15.00", f"month-{i}") for i in range(20))
        )
        accepted = [r for r in responses if r.status_code == 201]
        refused = [r for r in responses if r.status_code == 409]
        assert len(accepted) + len(refused) == 20, [r.text for r in responses]
        assert len(accepted) == 6  # 6 x 15.00 = 90.00; a seventh would pass 100.00
        assert {r.json()["Code"] for r in refused} == {"MANDATE_ALLOWANCE_EXCEEDED"}
        assert all(r.json()["Status"] == "COMPLETED" for r in accepted)
        assert (await read_mandate(env.client, active["Id"]))["RemainingThisPeriod"] == "10.00"
        assert await available(env.client, user["Id"], budget["BudgetId"], "EUR") == Decimal(
            "910.00"
        )
        assert await master_posted(env.client) == Decimal("90.00")
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok


async def test_20_parallel_retries_with_one_merchant_reference_collect_once() -> None:
    async with isolated("reference-race", database_pool_size=30, run_background_jobs=False) as env:
        user, budget, active = await active_mandate(env.client)
        responses = await asyncio.gather(
            *(collect(env.client, active["Id"], "10.00", "same-ref") for _ in range(20))
        )
        assert [r.status_code for r in responses] == [201] * 20, [r.text for r in responses]
        assert len({r.json()["Id"] for r in responses}) == 1
        assert await available(env.client, user["Id"], budget["BudgetId"], "EUR") == Decimal(
            "990.00"
        )
        assert await master_posted(env.client) == Decimal("10.00")
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok


async def test_20_parallel_deliveries_of_one_payment_credit_the_budget_once() -> None:
    async with isolated("paid-race", database_pool_size=30, run_background_jobs=False) as env:
        user, budget = await receiver(env.client)
        created = await requested(env.client, user["Id"], Amount="12.00")
        async with env.app.state.session_factory() as session:
            found = await PaymentRequestRepository(session, env.company_id).find(created["Id"])
            assert found is not None
            provider_request_id = found.provider_request_id
        # The same payment, sent under 20 event ids at once.
        callbacks = [
            signed(
                env.app.state.settings.provider_callback_secret,
                company_id=env.company_id,
                type_="payment_request.paid",
                data={
                    "requestId": provider_request_id,
                    "paymentId": "bp_in_race",
                    "budgetId": "bp_bud_any",
                    "currency": "EUR",
                    "amountMinor": 1200,
                },
                event_id=f"bankprov_evt_race_{i}",
            )
            for i in range(20)
        ]
        responses = await asyncio.gather(
            *(env.client.post("/providers/bankprov/callbacks", **c) for c in callbacks)
        )
        assert [r.status_code for r in responses] == [200] * 20, [r.text for r in responses]
        assert await available(env.client, user["Id"], budget["BudgetId"], "EUR") == Decimal(
            "12.00"
        )
        assert (await read(env.client, created["Id"])).json()["Status"] == "PAID"
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok
