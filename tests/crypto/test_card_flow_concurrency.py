"""The card-provider flows under real parallel requests against PostgreSQL (skipped on
SQLite, whose single writer makes these races impossible by construction)."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest

from finplat.ledger.verification import verify
from tests.banking.steps import available
from tests.cards.funding.steps import card_balance, set_fees
from tests.crypto.card_steps import (
    card_load,
    card_to_bank,
    card_to_bank_decide,
    card_to_bank_quote,
    cardprov_quote,
    confirm_load,
    crypto_card_user,
    decide,
    execute,
    funded_card_user,
    loaded_card_user,
)
from tests.crypto.steps import crypto_balance
from tests.databases import backend
from tests.isolated import isolated

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")


async def test_20_parallel_approvals_of_one_quote_execute_once() -> None:
    async with isolated("cryptocard", database_pool_size=30, sandbox_latency_ms=20) as env:
        user, budget, card = await funded_card_user(env.client, "1000")
        quote = await cardprov_quote(env.client, user["Id"], budget["BudgetId"], card["Id"], "100")
        responses = await asyncio.gather(
            *(
                (
                    decide(env.client, user["Id"], quote["QuoteId"], "APPROVE", key=f"p-{n}")
                    if n % 2
                    else execute(env.client, user["Id"], quote["QuoteId"], key=f"p-{n}")
                )
                for n in range(20)
            )
        )
        won = [r for r in responses if r.status_code in (200, 201)]
        assert len(won) == 1, [r.text for r in responses]
        assert {r.json()["Code"] for r in responses if r not in won} == {"QUOTE_ALREADY_ACCEPTED"}
        assert await available(env.client, user["Id"], budget["BudgetId"], "EUR") == 900
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok


async def test_20_parallel_approvals_of_one_card_to_bank_quote_unload_once() -> None:
    async with isolated("cryptocard", database_pool_size=30, sandbox_latency_ms=20) as env:
        user, budget, card = await loaded_card_user(env.client, "300")
        before = await card_balance(env.client, card)
        quote = await card_to_bank_quote(
            env.client, user["Id"], card["Id"], budget["BudgetId"], "100"
        )
        responses = await asyncio.gather(
            *(
                (
                    card_to_bank_decide(
                        env.client, user["Id"], quote["QuoteId"], "APPROVE", key=f"p-{n}"
                    )
                    if n % 2
                    else card_to_bank(env.client, user["Id"], quote["QuoteId"], key=f"p-{n}")
                )
                for n in range(20)
            )
        )
        won = [r for r in responses if r.status_code in (200, 201)]
        assert len(won) == 1, [r.text for r in responses]
        assert {r.json()["Code"] for r in responses if r not in won} == {"QUOTE_ALREADY_ACCEPTED"}
        assert await card_balance(env.client, card) == before - 100
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok


async def test_20_parallel_retries_of_one_card_load_load_once() -> None:
    async with isolated("cryptocard", database_pool_size=30, sandbox_latency_ms=20) as env:
        user, card = await crypto_card_user(env.client, "100")
        await set_fees(env.client, card)
        responses = await asyncio.gather(
            *(card_load(env.client, user["Id"], card["Id"], "30", key="one") for _ in range(20))
        )
        created = [r for r in responses if r.status_code == 201]
        assert created, [r.text for r in responses]
        # The others were told the first is in progress (retry later), never a second load.
        assert {r.status_code for r in responses} <= {201, 409, 503}
        assert len({r.json()["LoadId"] for r in created}) == 1
        balance = await crypto_balance(env.client, user["Id"])
        assert Decimal(str(balance["Available"])) == 70
        load_id = created[0].json()["LoadId"]
        await asyncio.gather(
            *(
                env.client.post(
                    f"/api/v2/sandbox/crypto/card-loads/{load_id}/confirm",
                    params={"userId": user["Id"]},
                    json={"Outcome": "CONFIRMED"},
                )
                for _ in range(10)
            )
        )
        read = await env.client.get(
            f"/api/v2/card-loads/crypto/{load_id}", params={"userId": user["Id"]}
        )
        assert read.json()["Status"] == "COMPLETED", read.text
        assert await card_balance(env.client, card) == Decimal(30)
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok


async def test_parallel_loads_with_their_own_keys_never_overdraw_the_balance() -> None:
    async with isolated("cryptocard", database_pool_size=30, sandbox_latency_ms=20) as env:
        user, card = await crypto_card_user(env.client, "100")
        await set_fees(env.client, card)
        responses = await asyncio.gather(
            *(
                card_load(env.client, user["Id"], card["Id"], "30", key=f"own-{n}")
                for n in range(10)
            )
        )
        assert sorted(r.status_code for r in responses) == [201] * 3 + [409] * 7
        for response in responses:
            if response.status_code == 201:
                await confirm_load(env.client, user["Id"], response.json()["LoadId"])
        assert await card_balance(env.client, card) == Decimal(90)
        balance = await crypto_balance(env.client, user["Id"])
        assert Decimal(str(balance["Available"])) == 10
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok


async def test_parallel_confirmations_of_a_companys_loads_each_complete_their_own() -> None:
    async with isolated("cryptocard", database_pool_size=30, sandbox_latency_ms=20) as env:
        user, card = await crypto_card_user(env.client, "100")
        await set_fees(env.client, card)
        loads = []
        for n in range(6):
            response = await card_load(env.client, user["Id"], card["Id"], "10", key=f"l-{n}")
            assert response.status_code == 201, response.text
            loads.append(response.json()["LoadId"])
        confirmed = await asyncio.gather(
            *(
                env.client.post(
                    f"/api/v2/sandbox/crypto/card-loads/{load_id}/confirm",
                    params={"userId": user["Id"]},
                    json={"Outcome": "CONFIRMED"},
                )
                for load_id in loads
            )
        )
        assert [r.status_code for r in confirmed] == [200] * 6, [r.text for r in confirmed]
        assert {r.json()["Status"] for r in confirmed} == {"COMPLETED"}
        assert await card_balance(env.client, card) == Decimal(60)
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok
