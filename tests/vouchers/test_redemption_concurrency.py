"""Single use under concurrency: real parallel requests against PostgreSQL (skipped on SQLite,
whose single writer makes these races impossible by construction)."""

from __future__ import annotations

import asyncio
from collections import Counter
from decimal import Decimal
from typing import Any

import httpx
import pytest

from finplat.ledger.verification import verify as verify_ledger
from tests.cards.funding.steps import active_card, card_balance
from tests.databases import backend
from tests.isolated import Isolated, isolated
from tests.vouchers.steps import fund_vouchers, sent_code, start, verify, voucher

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")

REFUSED = {"VOUCHER_USE_LIMIT_REACHED", "VOUCHER_EXHAUSTED", "VOUCHER_VALUE_CAP_REACHED"}


async def _card(env: Isolated) -> dict[str, Any]:
    card = await active_card(env.client, master=0)
    await fund_vouchers(env.client, 10_000)
    return card


async def _listed(api: httpx.AsyncClient, voucher_id: str) -> dict[str, Any]:
    items = (await api.get("/api/v2/vouchers")).json()["Items"]
    return dict(next(item for item in items if item["Id"] == voucher_id))


async def _ledger_ok(env: Isolated) -> None:
    async with env.app.state.session_factory() as session:
        report = await verify_ledger(session)
        assert report.ok, report.summary()


async def test_50_parallel_redemptions_of_a_3_use_voucher_complete_exactly_3() -> None:
    async with isolated("vconc", database_pool_size=40) as env:
        card = await _card(env)
        issued = await voucher(env.client, RequiresEmail2Fa=False, MaximumTotalUses=3, Value=10)
        responses = await asyncio.gather(
            *(start(env.client, issued["PlaintextCode"], card) for _ in range(50))
        )
        completed = [r for r in responses if r.status_code == 201]
        assert [r.json()["Status"] for r in completed] == ["COMPLETED"] * 3
        refused = Counter(r.json()["Code"] for r in responses if r.status_code != 201)
        assert sum(refused.values()) == 47
        assert set(refused) <= REFUSED, refused
        assert await card_balance(env.client, card) == Decimal(30)
        listed = await _listed(env.client, issued["Id"])
        assert (listed["SuccessfulUses"], listed["ReservedUses"]) == (3, 0)
        assert listed["Status"] == "EXHAUSTED"
        await _ledger_ok(env)


async def test_50_parallel_starts_reserve_3_and_parallel_verifies_credit_each_once() -> None:
    async with isolated("vconc", database_pool_size=40) as env:
        card = await _card(env)
        issued = await voucher(env.client, MaximumTotalUses=3, Value=10)
        responses = await asyncio.gather(
            *(start(env.client, issued["PlaintextCode"], card) for _ in range(50))
        )
        waiting = [r.json() for r in responses if r.status_code == 201]
        assert len(waiting) == 3
        assert {r.json()["Code"] for r in responses if r.status_code != 201} <= REFUSED
        codes = {r["Id"]: await sent_code(env.client, r["Id"]) for r in waiting}
        verifies = await asyncio.gather(
            *(verify(env.client, rid, code) for rid, code in codes.items() for _ in range(10))
        )
        assert {v.status_code for v in verifies} <= {200, 503}
        for rid in codes:
            got = (await env.client.get(f"/api/v2/vouchers/redemptions/{rid}")).json()
            assert got["Status"] == "COMPLETED"
        assert await card_balance(env.client, card) == Decimal(30)
        listed = await _listed(env.client, issued["Id"])
        assert (listed["SuccessfulUses"], listed["ReservedUses"]) == (3, 0)
        await _ledger_ok(env)


async def test_parallel_redemptions_by_one_user_stop_at_the_per_user_limit() -> None:
    async with isolated("vconc", database_pool_size=40) as env:
        card = await _card(env)
        issued = await voucher(env.client, RequiresEmail2Fa=False, PerUserLimit=2, Value=5)
        responses = await asyncio.gather(
            *(start(env.client, issued["PlaintextCode"], card) for _ in range(20))
        )
        assert sum(r.status_code == 201 for r in responses) == 2
        assert {r.json()["Code"] for r in responses if r.status_code != 201} == {
            "VOUCHER_PER_USER_LIMIT_REACHED"
        }
        assert await card_balance(env.client, card) == Decimal(10)
        await _ledger_ok(env)


async def test_parallel_redemptions_stop_at_the_aggregate_value_cap() -> None:
    async with isolated("vconc", database_pool_size=40) as env:
        card = await _card(env)
        issued = await voucher(
            env.client, RequiresEmail2Fa=False, Value=10, MaximumAggregateValue=30
        )
        responses = await asyncio.gather(
            *(start(env.client, issued["PlaintextCode"], card) for _ in range(20))
        )
        assert sum(r.status_code == 201 for r in responses) == 3
        assert {r.json()["Code"] for r in responses if r.status_code != 201} <= REFUSED
        listed = await _listed(env.client, issued["Id"])
        assert listed["RedeemedValue"] == 30
        assert await card_balance(env.client, card) == Decimal(30)
        await _ledger_ok(env)


async def test_parallel_wrong_codes_lock_the_redemption_after_five() -> None:
    async with isolated("vconc", database_pool_size=40) as env:
        card = await _card(env)
        issued = await voucher(env.client, Value=10)
        started = await start(env.client, issued["PlaintextCode"], card)
        rid = started.json()["Id"]
        code = await sent_code(env.client, rid)
        bad = f"{(int(code) + 1) % 1_000_000:06d}"
        answers = await asyncio.gather(*(verify(env.client, rid, bad) for _ in range(20)))
        counts = Counter(
            (a.status_code, a.json().get("Code") or a.json().get("ErrorCode")) for a in answers
        )
        assert counts[(403, "INVALID_VERIFICATION_CODE")] == 4
        assert counts[(409, "REDEMPTION_LOCKED")] == 1
        # The rest came after the lock: the failed redemption, as it stands.
        assert counts[(200, "VERIFICATION_LOCKED")] == 15
        late = await verify(env.client, rid, code)
        assert (late.json()["Status"], late.json()["ErrorCode"]) == (
            "FAILED",
            "VERIFICATION_LOCKED",
        )
        assert await card_balance(env.client, card) == 0
        await _ledger_ok(env)
