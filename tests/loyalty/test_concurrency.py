"""Real parallel loyalty calls against PostgreSQL (skipped on SQLite, whose single writer makes
these races impossible by construction): a purchase is awarded once, a file imported once."""

from __future__ import annotations

import asyncio

import pytest

from finplat.ledger.verification import verify
from tests.databases import backend
from tests.factories import user_payload
from tests.isolated import isolated
from tests.loyalty.steps import (
    AUTO_ASSIGN,
    cleared_purchase,
    csv_file,
    import_config,
    member_card,
    merchant,
    new_mid,
    points,
    program,
    upload,
)

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")


async def test_20_parallel_auto_assigns_of_one_purchase_award_it_once() -> None:
    async with isolated("loyaltyassign", database_pool_size=30) as env:
        api = env.client
        owner = await program(api, PointsPerUnit=1)
        card = await member_card(api)
        held = await cleared_purchase(api, card, 30, None)
        body = {"CardTransactionId": held["CardTransactionId"], "ProgramId": owner["Id"]}
        responses = await asyncio.gather(*(api.post(AUTO_ASSIGN, json=body) for _ in range(20)))
        assert {r.status_code for r in responses} == {200}, [r.text for r in responses]
        assert len({r.json()["Id"] for r in responses}) == 1
        assert await points(api, card["UserId"]) == 30
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok


async def test_10_parallel_imports_of_one_file_import_it_once() -> None:
    async with isolated("loyaltyimport", database_pool_size=20) as env:
        api = env.client
        owner = await program(api, PointsPerUnit=1)
        mid = new_mid()
        await merchant(api, owner["Id"], mid)
        config = await import_config(api, owner["Id"])
        user = (await api.post("/api/v2/users", json=user_payload())).json()["Id"]
        text = csv_file(*(f"T{i},{user},{mid},2,USD,2026-10-01T10:00:00Z" for i in range(25)))
        responses = await asyncio.gather(*(upload(api, config["Id"], text) for _ in range(10)))
        assert {r.status_code for r in responses} == {200}, [r.text for r in responses]
        assert sum(r.json()["Imported"] for r in responses) == 25
        assert await points(api, user) == 50
