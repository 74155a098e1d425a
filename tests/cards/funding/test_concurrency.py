"""Real parallel card top-ups and unloads against PostgreSQL (skipped on SQLite, whose single
writer makes these races impossible by construction)."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from finplat.cards.funding.models import CardFunding
from finplat.ledger.models import LedgerTransfer
from finplat.ledger.verification import verify
from finplat.reconciliation import service as reconciliation
from tests.cards.funding.steps import (
    active_card,
    card_balance,
    master_available,
    set_fees,
    topup,
    unload,
)
from tests.cards.steps import control
from tests.databases import backend
from tests.isolated import isolated

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")


async def test_32_parallel_top_ups_with_one_key_post_once() -> None:
    async with isolated("cardconc", database_pool_size=40) as env:
        card = await active_card(env.client, master=1000.0)
        responses = await asyncio.gather(
            *(topup(env.client, card, 100, key="one-top-up") for _ in range(32))
        )
        assert {r.status_code for r in responses} == {200}, [r.text for r in responses]
        assert len({r.content for r in responses}) == 1
        async with env.app.state.session_factory() as session:
            posts = (
                await session.execute(
                    select(func.count())
                    .select_from(LedgerTransfer)
                    .where(LedgerTransfer.code == "card.topup", LedgerTransfer.kind == "post")
                )
            ).scalar_one()
            fundings = (
                await session.execute(select(func.count()).select_from(CardFunding))
            ).scalar_one()
            assert (posts, fundings) == (1, 1)
            assert (await verify(session)).ok
        assert await master_available(env.client) == Decimal("900")
        assert await card_balance(env.client, card) == Decimal("99")  # default fee 1 %


async def test_parallel_unloads_never_overdraw_the_card() -> None:
    async with isolated("cardconc", database_pool_size=40) as env:
        card = await active_card(env.client, master=1000.0)
        await set_fees(env.client, card)  # no fees
        assert (await topup(env.client, card, 100)).status_code == 200
        responses = await asyncio.gather(
            *(unload(env.client, card, 10, key=f"unload-{i}") for i in range(32))
        )
        codes = sorted(r.status_code for r in responses)
        assert codes == [200] * 10 + [409] * 22, [r.text for r in responses if r.status_code >= 500]
        assert {r.json()["Code"] for r in responses if r.status_code == 409} == {
            "INSUFFICIENT_CARD_BALANCE"
        }
        assert await card_balance(env.client, card) == 0
        assert await master_available(env.client) == Decimal("1000")
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok


async def test_parallel_purchases_unloads_and_top_ups_keep_the_ledger_equal_to_the_provider() -> (
    None
):
    async with isolated("cardconc", database_pool_size=40) as env:
        api = env.client
        card = await active_card(api, master=1000.0)
        await set_fees(api, card, DeclineFee=1)
        assert (await topup(api, card, 50)).status_code == 200
        purchase = {
            "url": f"/api/v2/sandbox/cards/{card['Id']}/authorizations",
            "params": {"userId": card["UserId"]},
            "json": {"Amount": 15, "Currency": "USD", "Merchant": "Race"},
        }
        operations = [control(api, card, "freeze"), control(api, card, "enable")]
        for i in range(6):
            operations += [
                topup(api, card, 10, key=f"topup-{i}"),
                unload(api, card, 12, key=f"unload-{i}"),
                api.post(**purchase),  # type: ignore[arg-type]
            ]
        responses = await asyncio.gather(*operations)
        assert all(r.status_code < 500 for r in responses), [
            r.text for r in responses if r.status_code >= 500
        ]
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok
        report = await reconciliation.reconcile(
            env.app.state.session_factory, env.app.state.providers
        )
        assert (report.differences, report.errors) == ([], [])
