"""Referrers' levels by qualifying top-up volume, and what a programme change does to them."""

from __future__ import annotations

import httpx
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from tests.cards.funding.steps import unload
from tests.onboarding import create_user
from tests.referrals.steps import (
    BRONZE,
    GOLD,
    configure,
    friend_with_card,
    history,
    referred,
    run_job,
    topped_up,
)

Factory = async_sessionmaker[AsyncSession]


async def test_volume_lifts_the_referrer_and_a_clawback_drops_them(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    made = await configure(
        api, LevelBasis="QUALIFYING_TOPUP_VOLUME", Levels=[BRONZE, {**GOLD, "Threshold": 150}]
    )
    assert made["Levels"][1]["Threshold"] == 150
    referrer = await create_user(api)
    _, card = await friend_with_card(api, made["Id"], referrer["Id"])
    await topped_up(api, card, 100)
    await run_job(session_factory)
    assert [c["ToLevel"] for c in await history(api, made["Id"], referrer["Id"])] == ["BRONZE"]
    await topped_up(api, card, 100)
    await run_job(session_factory)
    assert (await unload(api, card, 10)).status_code == 200
    await run_job(session_factory)
    changes = await history(api, made["Id"], referrer["Id"])
    assert [(c["FromLevel"], c["ToLevel"], c["Reason"]) for c in changes] == [
        (None, "BRONZE", "JOINED"),
        ("BRONZE", "GOLD", "THRESHOLD_REACHED"),
        ("GOLD", "BRONZE", "THRESHOLD_LOST"),
    ]


async def test_a_member_whose_level_is_removed_takes_the_one_they_reach(
    api: httpx.AsyncClient,
) -> None:
    made = await configure(api)
    referrer = await create_user(api)
    await referred(api, made["Id"], referrer["Id"])
    silver = {**BRONZE, "Code": "SILVER", "Name": "Silver"}
    changed = await configure(api, Levels=[silver, GOLD])
    changes = await history(api, made["Id"], referrer["Id"])
    assert [(c["FromLevel"], c["ToLevel"], c["Reason"], c["ProgramRevision"]) for c in changes] == [
        (None, "BRONZE", "JOINED", made["Revision"]),
        ("BRONZE", "SILVER", "PROGRAM_CHANGED", changed["Revision"]),
    ]


async def test_level_history_pages(api: httpx.AsyncClient) -> None:
    made = await configure(api)
    referrer = await create_user(api)
    await referred(api, made["Id"], referrer["Id"])
    response = await api.get(
        f"/api/v2/referrals/programs/{made['Id']}/members/{referrer['Id']}/level-history",
        params={"page": 2, "pageSize": 1},
    )
    assert response.status_code == 200, response.text
    assert response.json() == {"Items": [], "Page": 2, "PageSize": 1, "HasMore": False}
