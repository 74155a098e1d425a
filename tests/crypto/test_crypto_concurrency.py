"""Crypto rules under real parallel requests against PostgreSQL (skipped on SQLite, whose
single writer makes these races impossible by construction)."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest

from finplat.ledger.verification import verify
from tests.crypto.steps import (
    accept,
    crypto_balance,
    crypto_banking_user,
    exchange_quote,
    payin_address,
)
from tests.databases import backend
from tests.isolated import isolated
from tests.onboarding import approved_user

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")


async def test_20_parallel_first_requests_for_a_pair_get_one_address() -> None:
    async with isolated("crypto", database_pool_size=30, sandbox_latency_ms=20) as env:
        user = await approved_user(env.client)
        answers = await asyncio.gather(
            *(payin_address(env.client, user["Id"], "USDC", 42161) for _ in range(20))
        )
        assert len({a["Address"] for a in answers}) == 1


async def test_20_parallel_accepts_of_one_quote_execute_once() -> None:
    async with isolated("crypto", database_pool_size=30, sandbox_latency_ms=20) as env:
        user, budget = await crypto_banking_user(env.client, "100")
        quote = await exchange_quote(env.client, user["Id"], budget["BudgetId"], "30")
        responses = await asyncio.gather(
            *(
                accept(
                    env.client,
                    user["Id"],
                    quote["QuoteId"],
                    key=f"parallel-{n}",
                    path="bankprov-deposits" if n % 2 else "exchange/accept",
                )
                for n in range(20)
            )
        )
        statuses = sorted(r.status_code for r in responses)
        assert statuses == [201] + [409] * 19, [r.text for r in responses]
        assert {r.json()["Code"] for r in responses if r.status_code == 409} == {
            "QUOTE_ALREADY_ACCEPTED"
        }
        balance = await crypto_balance(env.client, user["Id"])
        assert Decimal(str(balance["Available"])) == 70
        assert Decimal(str(balance["PendingDebits"])) == 30
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok
