"""Wallet withdrawals under real parallel requests against PostgreSQL (skipped on SQLite,
whose single writer makes these races impossible by construction)."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest

from finplat.ledger.verification import verify
from tests.crypto.steps import credited_user, crypto_balance
from tests.crypto.withdrawal_steps import code_of, confirm, external_address, initiated, wrong
from tests.databases import backend
from tests.isolated import isolated

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")


async def test_20_parallel_confirms_of_one_withdrawal_broadcast_once() -> None:
    async with isolated(
        "crypto-withdrawal",
        database_pool_size=30,
        sandbox_latency_ms=20,
        crypto_withdrawal_cooling_off_hours=0,
    ) as env:
        user, _ = await credited_user(env.client, "100")
        started = await initiated(env.client, user["Id"], external_address(1), amount="30")
        transfer_id = started["TransferId"]
        code = await code_of(env.client, user["Id"], transfer_id)
        responses = await asyncio.gather(
            *(
                confirm(env.client, user["Id"], transfer_id, code, key=f"confirm-{n}")
                for n in range(20)
            )
        )
        assert {r.status_code for r in responses} == {200}, [r.text for r in responses]
        assert {r.json()["TransferId"] for r in responses} == {transfer_id}
        rail = env.app.state.providers.crypto
        key = f"wallet-withdrawal:{transfer_id}"
        assert await rail.broadcasts(company_id=env.company_id, idempotency_key=key) == 1
        hashes = {r.json()["TxHash"] for r in responses if r.json()["TxHash"]}
        assert len(hashes) == 1
        balance = await crypto_balance(env.client, user["Id"])
        assert Decimal(str(balance["Available"])) == 65  # 30 and Ethereum's 5 reserved
        assert Decimal(str(balance["PendingDebits"])) == 35
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok


async def test_20_parallel_wrong_codes_lock_after_five() -> None:
    async with isolated("crypto-withdrawal-lock", database_pool_size=30) as env:
        user, _ = await credited_user(env.client, "100")
        started = await initiated(env.client, user["Id"], external_address(1), amount="30")
        transfer_id = started["TransferId"]
        code = await code_of(env.client, user["Id"], transfer_id)
        responses = await asyncio.gather(
            *(confirm(env.client, user["Id"], transfer_id, wrong(code)) for _ in range(20))
        )
        statuses = sorted(r.status_code for r in responses)
        # Four wrong tries answered 403, the fifth locks it; the rest find it failed.
        assert statuses.count(403) == 4, [r.text for r in responses]
        assert statuses.count(409) == 1
        assert statuses.count(200) == 15
        balance = await crypto_balance(env.client, user["Id"])
        assert Decimal(str(balance["Available"])) == 100
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok
