"""Automatic top-ups under real parallel requests against PostgreSQL (skipped on SQLite, whose
single writer makes the races impossible by construction): a rule's monthly limit holds however
many triggers arrive at once, parallel clearings under a low-balance threshold start one top-up
for their shortfall, and a rule set many times at once is set, not a server error."""

from __future__ import annotations

import asyncio
from collections import Counter
from decimal import Decimal
from typing import Any

import pytest

from finplat.ledger.verification import verify
from tests.cards.funding.steps import (
    active_card,
    auto_topup_settings,
    card_balance,
    purchase,
    set_auto_topup,
    set_fees,
    topup,
)
from tests.databases import backend
from tests.isolated import isolated

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")
DEPOSITS = 12
CLEARINGS = 8


async def test_parallel_deposits_top_up_no_more_than_the_monthly_limit() -> None:
    async with isolated("autotopup", database_pool_size=40, sandbox_latency_ms=20) as env:
        api = env.client
        card = await active_card(api, master=0)
        await set_fees(api, card)  # no fees
        rule = await set_auto_topup(
            api, card, "deposit", Amount=25, MonthlyLimit=100, Currency="USDC"
        )
        assert rule.status_code == 200, rule.text
        responses = await asyncio.gather(
            *(
                api.post(
                    f"/api/v2/sandbox/cards/{card['Id']}/deposits",
                    params={"userId": card["UserId"]},
                    json={"Amount": 50, "Currency": "USDC"},
                    headers={"Idempotency-Key": f"deposit-{i}"},
                )
                for i in range(DEPOSITS)
            )
        )
        assert Counter(r.status_code for r in responses) == {200: DEPOSITS}, [
            r.text for r in responses
        ]
        topped_up = [r.json()["AutoTopupOrderId"] for r in responses]
        assert len([t for t in topped_up if t is not None]) == 4  # 4 x 25 = the limit of 100
        month = (await auto_topup_settings(api, card))["CurrentMonth"]
        assert (month["Count"], month["Amount"]) == (4, 100)
        assert await card_balance(api, card) == Decimal(100)
        async with env.app.state.session_factory() as session:
            report = await verify(session)
            assert report.ok, report.summary()


async def test_parallel_clearings_under_the_threshold_start_one_low_balance_top_up() -> None:
    async with isolated("autotopup", database_pool_size=40, sandbox_latency_ms=20) as env:
        api = env.client
        card = await active_card(api, master=1000)
        await set_fees(api, card)  # no fees
        assert (await topup(api, card, 50)).status_code == 200
        rule = await set_auto_topup(
            api, card, "low-balance", Threshold=50, Amount=100, MonthlyLimit=1000
        )
        assert rule.status_code == 200, rule.text
        # Each clearing leaves the card under 50 until a top-up lands; all of them together
        # take 40, which one top-up of 100 covers.
        cleared = await asyncio.gather(*(purchase(api, card, 5) for _ in range(CLEARINGS)))
        assert {c["Approved"] for c in cleared} == {True}
        topped_up = [c["AutoTopupOrderId"] for c in cleared if c["AutoTopupOrderId"] is not None]
        assert len(topped_up) == 1, topped_up
        month = (await auto_topup_settings(api, card))["CurrentMonth"]
        assert (month["Count"], month["Amount"]) == (1, 100)
        assert await card_balance(api, card) == Decimal(110)
        async with env.app.state.session_factory() as session:
            report = await verify(session)
            assert report.ok, report.summary()


@pytest.mark.parametrize("rule", ["low-balance", "failed-tx", "deposit"])
async def test_parallel_first_settings_of_a_rule_all_succeed_and_leave_one_rule(rule: str) -> None:
    async with isolated("autotopup", database_pool_size=40, sandbox_latency_ms=20) as env:
        api = env.client
        card = await active_card(api, master=0)
        extras: dict[str, dict[str, Any]] = {
            "low-balance": {"Threshold": 5},
            "deposit": {"Currency": "USDT"},
        }
        extra = extras.get(rule, {})
        responses = await asyncio.gather(
            *(
                set_auto_topup(api, card, rule, Amount=10 + i, MonthlyLimit=100, **extra)
                for i in range(8)
            )
        )
        assert Counter(r.status_code for r in responses) == {200: 8}, [r.text for r in responses]
        settings = await auto_topup_settings(api, card)
        field = {"low-balance": "LowBalance", "failed-tx": "FailedTransaction"}.get(rule, "Deposit")
        assert settings[field]["Amount"] in range(10, 18)  # one of the eight, whole
