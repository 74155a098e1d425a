"""Real parallel transfers against PostgreSQL (skipped on SQLite, whose single writer makes
these races impossible by construction)."""

from __future__ import annotations

import asyncio
from collections import Counter
from decimal import Decimal
from typing import Any

import pytest

from finplat.ledger.verification import verify
from finplat.providers.banking.sandbox.budgets import SandboxBankingCore
from tests.banking.steps import available, create_budget, credit, funded_user
from tests.banking.transfers.steps import master_available, transfer
from tests.databases import backend
from tests.isolated import isolated

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")


async def test_parallel_transfers_never_overdraw_the_source() -> None:
    async with isolated("transfers", database_pool_size=30, sandbox_latency_ms=20) as env:
        api = env.client
        user, main = await funded_user(api, "100.00", "EUR")
        savings = await create_budget(api, user)
        responses = await asyncio.gather(
            *(
                transfer(
                    api,
                    user,
                    main["BudgetId"],
                    10,
                    **(
                        {"ToMaster": True}
                        if i % 2
                        else {"DestinationBudgetId": savings["BudgetId"]}
                    ),
                )
                for i in range(24)
            )
        )
        outcomes = Counter(
            (r.status_code, r.json()["Status"] if r.status_code == 201 else r.json()["Code"])
            for r in responses
        )
        assert outcomes == {(201, "COMPLETED"): 10, (409, "INSUFFICIENT_FUNDS"): 14}, outcomes
        moved = await available(api, user["Id"], savings["BudgetId"], "EUR") + (
            await master_available(api, "EUR")
        )
        assert moved == Decimal("100.00")
        assert await available(api, user["Id"], main["BudgetId"], "EUR") == Decimal(0)
        async with env.app.state.session_factory() as session:
            report = await verify(session)
            assert report.ok, report.summary()


async def test_parallel_retries_of_one_external_reference_move_the_money_once() -> None:
    async with isolated("transfers", database_pool_size=30, sandbox_latency_ms=20) as env:
        api = env.client
        user, main = await funded_user(api, "100.00", "EUR")
        responses = await asyncio.gather(
            *(
                transfer(api, user, main["BudgetId"], 30, ToMaster=True, ExternalReferenceId="once")
                for _ in range(12)
            )
        )
        assert [r.status_code for r in responses] == [201] * 12
        assert len({r.json()["TransactionId"] for r in responses}) == 1
        assert await master_available(api, "EUR") == Decimal("30.00")
        assert await available(api, user["Id"], main["BudgetId"], "EUR") == Decimal("70.00")


@pytest.fixture
def slow_provider_debits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The banking provider takes its time between debiting a transfer's source and crediting
    its destination, so opposite transfers both debit before either credits."""
    move = SandboxBankingCore.move

    async def slow_move(self: SandboxBankingCore, session: Any, **kwargs: Any) -> None:
        await move(self, session, **kwargs)
        if kwargs["kind"] == "transfer_out":
            await asyncio.sleep(0.3)

    monkeypatch.setattr(SandboxBankingCore, "move", slow_move)


@pytest.mark.usefixtures("slow_provider_debits")
async def test_opposite_transfers_between_two_budgets_both_complete() -> None:
    async with isolated("transfers", database_pool_size=30) as env:
        api = env.client
        user, main = await funded_user(api, "100.00", "EUR")
        savings = await create_budget(api, user)
        await credit(api, user["Id"], savings["BudgetId"], "100.00", "EUR")
        responses = await asyncio.gather(
            transfer(api, user, main["BudgetId"], 10, DestinationBudgetId=savings["BudgetId"]),
            transfer(api, user, savings["BudgetId"], 30, DestinationBudgetId=main["BudgetId"]),
        )
        assert [(r.status_code, r.json().get("Status")) for r in responses] == [
            (201, "COMPLETED"),
            (201, "COMPLETED"),
        ], [r.text for r in responses]
        assert await available(api, user["Id"], main["BudgetId"], "EUR") == Decimal("120.00")
        assert await available(api, user["Id"], savings["BudgetId"], "EUR") == Decimal("80.00")
