"""MOR card operations retried in parallel against PostgreSQL (skipped on SQLite, whose single
writer makes these races impossible by construction)."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select

from finplat.cards.funding.models import CardFunding
from finplat.cards.models import Card
from finplat.ledger.verification import verify
from finplat.mor.access import PREFIX
from tests.cards.steps import approved_card_user, order_body
from tests.databases import backend
from tests.isolated import isolated
from tests.mor.card_steps import approve, balance, batch, load_request, mor_card

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")


async def test_parallel_retries_of_a_batch_create_each_card_once() -> None:
    async with isolated("morbatch", mor=True, database_pool_size=20) as env:
        api = env.client
        user = await approved_card_user(api)
        orders = [await order_body(api, user) for _ in range(3)]
        responses = await asyncio.gather(*(batch(api, orders, key="same-batch") for _ in range(6)))
        assert [r.status_code for r in responses] == [200] * 6, [r.text for r in responses]
        assert len({r.content for r in responses}) == 1
        async with env.app.state.session_factory() as session:
            stmt = select(func.count()).select_from(Card).where(Card.company_id == env.company_id)
            assert (await session.execute(stmt)).scalar_one() == 3
            assert (await verify(session)).ok


async def test_parallel_approvals_of_a_load_request_fund_the_card_once() -> None:
    async with isolated("morload", mor=True, database_pool_size=20) as env:
        api = env.client
        card = await mor_card(api)
        request_id = await load_request(api, card, 40)
        responses = await asyncio.gather(*(approve(api, request_id) for _ in range(6)))
        assert {r.status_code for r in responses} <= {200, 503}, [r.text for r in responses]
        assert any(r.status_code == 200 for r in responses)
        final = (await approve(api, request_id)).json()
        assert final["Status"] == "FUNDED"
        assert await balance(api, card["Id"]) == 40
        async with env.app.state.session_factory() as session:
            stmt = (
                select(func.count())
                .select_from(CardFunding)
                .where(CardFunding.card_id == card["Id"])
            )
            assert (await session.execute(stmt)).scalar_one() == 1
            assert (await verify(session)).ok
        listed = await api.get(f"{PREFIX}/load-requests", params={"status": "FUNDED"})
        assert [r["Id"] for r in listed.json()["Items"]] == [request_id]
