"""Crypto rules under real parallel requests against PostgreSQL (skipped on SQLite, whose
single writer makes these races impossible by construction)."""

from __future__ import annotations

import asyncio

import pytest

from tests.crypto.steps import payin_address
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
