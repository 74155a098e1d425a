"""A boost's awards and budget under real parallel accruals against PostgreSQL (skipped on
SQLite, whose single writer makes the race impossible by construction)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from finplat.ledger.verification import verify as verify_ledger
from finplat.referrals import accrual
from tests.cards.funding.steps import fund_master, topup
from tests.databases import backend
from tests.isolated import isolated
from tests.onboarding import create_user
from tests.referrals.steps import boost, boosts, configure, friend_with_card, rewards

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")


async def _pair(api: httpx.AsyncClient, program_id: str) -> tuple[int, dict[str, Any]]:
    referrer = await create_user(api)
    _, card = await friend_with_card(api, program_id, referrer["Id"])
    return referrer["Id"], card


async def test_30_parallel_qualifying_top_ups_against_10_awards_allocate_exactly_10() -> None:
    async with isolated("refconc", database_pool_size=40) as env:
        api = env.client
        program = await configure(api)
        await boost(api, program["Id"], MaximumAwards=10, FundedBudget=1000)
        pairs = [await _pair(api, program["Id"]) for _ in range(30)]
        await fund_master(api, 100_000)
        responses = await asyncio.gather(*(topup(api, card, 100) for _, card in pairs))
        assert {r.status_code for r in responses} == {200}
        # Every top-up accrued in its own transaction, all at once.
        counts = await accrual.run_once(env.app.state.session_factory, concurrency=30)
        assert counts["topups"] == 30
        (read,) = await boosts(api, program["Id"])
        assert (read["AllocatedAwards"], read["ReservedBudget"]) == (10, 10)
        awards = [
            item
            for referrer, _ in pairs
            for item in await rewards(api, referrer)
            if item["EventType"] == "BOOST"
        ]
        assert len(awards) == 10
        assert sum(item["Amount"] for item in awards) == 10
        async with env.app.state.session_factory() as session:
            report = await verify_ledger(session)
            assert report.ok, report.summary()
