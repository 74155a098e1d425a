"""Real parallel shipments against PostgreSQL (skipped on SQLite, whose single writer makes the
race impossible by construction): a card ships once and its fee is charged once, however many
bulk-ship requests with different keys arrive at once."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from finplat.ledger.verification import verify
from tests.cards.physical.steps import (
    DOMESTIC_TOTAL,
    fund_master,
    master_available,
    pending_physical,
    ship,
)
from tests.databases import backend
from tests.isolated import isolated

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")
REQUESTS = 12


async def test_parallel_shipments_of_one_card_ship_and_charge_once() -> None:
    async with isolated("shipping", database_pool_size=30, sandbox_latency_ms=20) as env:
        api = env.client
        card = await pending_physical(api)
        await fund_master(api, 100)
        responses = await asyncio.gather(
            *(ship(api, card, key=f"ship-{i}") for i in range(REQUESTS))
        )
        outcomes = Counter(
            r.status_code if r.status_code == 200 else (r.status_code, r.json()["Code"])
            for r in responses
        )
        assert outcomes == {200: 1, (409, "CARD_ALREADY_SHIPPED"): REQUESTS - 1}, outcomes
        assert await master_available(api) == 100 - DOMESTIC_TOTAL
        shipped = (await api.get("/api/v2/events", params={"type": "card.shipped"})).json()
        assert len(shipped["Items"]) == 1
        async with env.app.state.session_factory() as session:
            report = await verify(session)
            assert report.ok, report.summary()
