"""Parallel trades against PostgreSQL (SQLite's single writer makes the races impossible by
construction): one quote trades once, and trades of many quotes never overdraw the budget."""

from __future__ import annotations

import asyncio
from collections import Counter
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from finplat.ledger.verification import verify
from finplat.providers.banking.sandbox.models import SandboxBankprovFxTrade
from finplat.transactions.kinds import TransactionType
from finplat.transactions.models import Transaction
from tests.banking.fx.steps import execute, quoted
from tests.banking.steps import available, funded_user
from tests.databases import backend
from tests.isolated import isolated
from tests.onboarding import set_fault

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")


async def test_parallel_executions_of_one_quote_make_one_trade() -> None:
    async with isolated("fx", database_pool_size=30, sandbox_latency_ms=20) as env:
        user, budget = await funded_user(env.client, "1000.00", "EUR")
        offer = await quoted(env.client, user, amount=100)
        responses = await asyncio.gather(
            *(execute(env.client, user, offer["QuoteId"], key=f"parallel-{i}") for i in range(12))
        )
        statuses = sorted(r.status_code for r in responses)
        assert statuses == [201] + [409] * 11, [r.text for r in responses]
        assert {r.json()["Code"] for r in responses if r.status_code == 409} == {
            "QUOTE_ALREADY_EXECUTED"
        }
        async with env.app.state.session_factory() as session:
            trades = (
                await session.execute(select(func.count()).select_from(SandboxBankprovFxTrade))
            ).scalar_one()
            assert trades == 1
            # The quote was claimed once locally: the others never reserved nor reached the
            # provider (they would have left FAILED transactions behind).
            recorded = (
                await session.execute(
                    select(func.count())
                    .select_from(Transaction)
                    .where(Transaction.type == TransactionType.FX_TRADE.value)
                )
            ).scalar_one()
            assert recorded == 1
            report = await verify(session)
            assert report.ok, report.summary()
        bid = budget["BudgetId"]
        assert await available(env.client, user["Id"], bid, "EUR") == Decimal("900.00")
        assert await available(env.client, user["Id"], bid, "USD") == Decimal("107.73")


async def test_parallel_trades_of_many_quotes_never_overdraw_the_budget() -> None:
    async with isolated("fx", database_pool_size=30, sandbox_latency_ms=20) as env:
        user, budget = await funded_user(env.client, "100.00", "EUR")
        offers = [await quoted(env.client, user, amount=30) for _ in range(8)]
        responses = await asyncio.gather(
            *(
                execute(env.client, user, offer["QuoteId"], key=f"trade-{i}")
                for i, offer in enumerate(offers)
            )
        )
        outcomes = Counter(
            r.json()["Status"] if r.status_code == 201 else (r.status_code, r.json()["Code"])
            for r in responses
        )
        assert outcomes == {"COMPLETED": 3, (409, "INSUFFICIENT_FUNDS"): 5}, outcomes
        bid = budget["BudgetId"]
        assert await available(env.client, user["Id"], bid, "EUR") == Decimal("10.00")
        async with env.app.state.session_factory() as session:
            report = await verify(session)
            assert report.ok, report.summary()


async def test_parallel_reads_of_a_pending_trade_settle_it_once_and_all_answer_completed() -> None:
    """Reading a transaction never answers 409: of parallel reads of a PENDING trade, one
    settles it and the others wait for it and answer the settled trade."""
    async with isolated(
        "fx", database_pool_size=30, sandbox_latency_ms=20, provider_timeout_seconds=1.0
    ) as env:
        api = env.client
        user, budget = await funded_user(api, "100.00", "EUR")
        offer = await quoted(api, user, amount=40)
        # The provider trades, but its answer is lost: the trade stays PENDING here.
        await set_fault(api, "bankprov", "execute_trade", "timeout")
        executed = await execute(api, user, offer["QuoteId"])
        assert executed.status_code == 201, executed.text
        trade = executed.json()
        assert trade["Status"] == "PENDING"
        path = f"/api/v2/transactions/{trade['TransactionId']}"
        responses = await asyncio.gather(*(api.get(path) for _ in range(12)))
        answers = Counter(
            (r.status_code, r.json().get("Status") or r.json().get("Code")) for r in responses
        )
        assert answers == {(200, "COMPLETED"): 12}, answers
        bid = budget["BudgetId"]
        assert await available(api, user["Id"], bid, "EUR") == Decimal("60.00")
        assert await available(api, user["Id"], bid, "USD") == Decimal(str(offer["BuyAmount"]))
        async with env.app.state.session_factory() as session:
            report = await verify(session)
            assert report.ok, report.summary()
