"""Top-ups served by the batched lane earn referral rewards as the route's do (PostgreSQL
only: on SQLite there are no batches)."""

from __future__ import annotations

import dataclasses

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.cards.funding.batches.service import TopupBatches
from tests.cards.funding.steps import topup
from tests.databases import backend
from tests.onboarding import create_user
from tests.referrals.steps import configure, friend_with_card, rewards, run_job, topped_up

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="batches need PostgreSQL")


async def test_a_batched_top_up_earns_its_commission(
    api: httpx.AsyncClient, app: FastAPI, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    program = await configure(api)
    referrer = await create_user(api)
    _, card = await friend_with_card(api, program["Id"], referrer["Id"])
    await topped_up(api, card, 10)  # the route's (it opens the fee revenue account)
    lane = app.state.topup_batches
    assert isinstance(lane, TopupBatches)
    before = dataclasses.replace(lane.stats)
    response = await topup(api, card, 50)
    assert response.status_code == 200, response.text
    assert lane.stats.served - before.served == 1  # a batch served it
    await run_job(session_factory)
    commissions = [r for r in await rewards(api, referrer["Id"]) if r["EventType"] == "TOPUP"]
    assert sorted(r["BasisAmount"] for r in commissions) == [10, 50]
