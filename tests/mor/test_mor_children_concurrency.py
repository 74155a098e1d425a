"""Real parallel fundings of child companies against PostgreSQL (skipped on SQLite, whose
single writer makes the race impossible by construction): the parent's wallet is never
overdrawn, and what left it is exactly what reached the children."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest

from finplat.companies import service as companies
from finplat.db.unit_of_work import unit_of_work
from finplat.ledger.verification import verify
from finplat.mor.access import PREFIX
from tests.databases import backend
from tests.isolated import isolated
from tests.mor.money_steps import client_for, fund

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")


async def test_20_parallel_fundings_never_overdraw_the_parent() -> None:
    # A loaded machine may take seconds to hand 20 bodies over: no body deadline in the way.
    async with isolated("morfundings", database_pool_size=30, body_timeout_seconds=60) as env:
        async with unit_of_work(env.app.state.session_factory) as session:
            await companies.set_mor(session, company_id=env.company_id, enabled=True)
        api = env.client
        await fund(api, 100)
        children = []
        for i in range(2):
            created = await api.post(f"{PREFIX}/children", json={"Name": f"Child {i}"})
            assert created.status_code == 201, created.text
            children.append(created.json())
        responses = await asyncio.gather(
            *(
                api.post(
                    f"{PREFIX}/children/{children[i % 2]['Id']}/fundings",
                    json={"Amount": 15, "Currency": "USD"},
                )
                for i in range(20)
            )
        )
        statuses = sorted(r.status_code for r in responses)
        assert statuses == [201] * 6 + [409] * 14, [r.text for r in responses]
        parent = (await api.get(f"{PREFIX}/wallets/USD")).json()
        assert Decimal(str(parent["Available"])) == Decimal(10)
        received = Decimal(0)
        for child in children:
            async with client_for(env.app, child["ApiKey"]) as own:
                wallet = await own.get(f"{PREFIX}/wallets/USD")
                if wallet.status_code == 200:
                    received += Decimal(str(wallet.json()["Available"]))
        assert received == Decimal(90)
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok
