"""Boosts: multipliers and milestones within a funded budget and a number of awards; pause
with the programme's expected revision."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.kit.clock import utcnow
from finplat.referrals.computation import recompute
from tests.cards.funding.steps import unload
from tests.onboarding import create_user
from tests.referrals.steps import (
    boost,
    boosts,
    configure,
    friend_with_card,
    pause_boost,
    program,
    rewards,
    run_job,
    topped_up,
    window,
)

Factory = async_sessionmaker[AsyncSession]
BOOSTS = "/api/v2/referrals/programs/{}/boosts"


def of_type(items: list[dict[str, Any]], event_type: str) -> list[dict[str, Any]]:
    return [i for i in items if i["EventType"] == event_type]


async def test_a_boost_reads_back_with_its_policy_hash_and_bumps_the_revision(
    api: httpx.AsyncClient,
) -> None:
    made = await configure(api)
    created = await boost(api, made["Id"], MaximumIncrementalReward=3)
    assert created["Status"] == "ACTIVE"
    assert (created["Kind"], created["Multiplier"], created["Currency"]) == (
        "MULTIPLIER",
        2,
        "USD",
    )
    assert (created["AllocatedAwards"], created["ReservedBudget"]) == (0, 0)
    assert len(created["PolicyHash"]) == 64
    assert created["ProgramRevision"] == made["Revision"] + 1
    assert (await program(api))["Revision"] == made["Revision"] + 1
    assert [b["Id"] for b in await boosts(api, made["Id"])] == [created["Id"]]


async def test_a_multiplier_adds_an_award_to_each_top_up_reward(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    made = await configure(api)
    created = await boost(api, made["Id"], Multiplier="1.5")
    referrer = await create_user(api)
    _, card = await friend_with_card(api, made["Id"], referrer["Id"])
    await topped_up(api, card, 200)  # commission 2.00 at 100 bps
    await run_job(session_factory)
    (award,) = of_type(await rewards(api, referrer["Id"]), "BOOST")
    assert award["Amount"] == 1  # 2.00 x 0.5
    assert award["Explanation"]["PolicyHash"] == created["PolicyHash"]
    assert recompute(award["Explanation"]) == 100
    (read,) = await boosts(api, made["Id"])
    assert (read["AllocatedAwards"], read["ReservedBudget"]) == (1, 1)


async def test_an_award_is_capped_by_the_maximum_incremental_reward(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    made = await configure(api)
    await boost(api, made["Id"], Multiplier=3, MaximumIncrementalReward="0.5")
    referrer = await create_user(api)
    _, card = await friend_with_card(api, made["Id"], referrer["Id"])
    await topped_up(api, card, 100)
    await run_job(session_factory)
    (award,) = of_type(await rewards(api, referrer["Id"]), "BOOST")
    assert award["Amount"] == 0.5


async def test_awards_stop_at_the_maximum_awards(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    made = await configure(api)
    await boost(api, made["Id"], MaximumAwards=2)
    referrer = await create_user(api)
    _, card = await friend_with_card(api, made["Id"], referrer["Id"])
    for _ in range(3):
        await topped_up(api, card, 100)
    await run_job(session_factory)
    assert len(of_type(await rewards(api, referrer["Id"]), "BOOST")) == 2
    (read,) = await boosts(api, made["Id"])
    assert (read["AllocatedAwards"], read["Status"]) == (2, "EXHAUSTED")


async def test_awards_stop_before_passing_the_funded_budget(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    made = await configure(api)
    await boost(api, made["Id"], FundedBudget="2.5", MaximumAwards=100)
    referrer = await create_user(api)
    _, card = await friend_with_card(api, made["Id"], referrer["Id"])
    for _ in range(3):
        await topped_up(api, card, 100)  # each award 1.00
    await run_job(session_factory)
    (read,) = await boosts(api, made["Id"])
    assert (read["AllocatedAwards"], read["ReservedBudget"]) == (2, 2)


async def test_a_boost_outside_its_window_awards_nothing(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    made = await configure(api)
    now = utcnow()
    await boost(
        api,
        made["Id"],
        StartsAt=(now + timedelta(days=1)).isoformat(),
        EndsAt=(now + timedelta(days=2)).isoformat(),
    )
    referrer = await create_user(api)
    _, card = await friend_with_card(api, made["Id"], referrer["Id"])
    await topped_up(api, card, 100)
    await run_job(session_factory)
    assert of_type(await rewards(api, referrer["Id"]), "BOOST") == []
    assert (await boosts(api, made["Id"]))[0]["Status"] == "SCHEDULED"


async def test_a_milestone_awards_once_on_reaching_the_friend_count(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    made = await configure(api)
    await boost(
        api,
        made["Id"],
        Kind="MILESTONE",
        Multiplier=None,
        QualifiedFriendCount=2,
        MilestoneAmount=15,
    )
    referrer = await create_user(api)
    for count in range(3):
        _, card = await friend_with_card(api, made["Id"], referrer["Id"])
        await topped_up(api, card, 100)
        await run_job(session_factory)
        awards = of_type(await rewards(api, referrer["Id"]), "BOOST")
        assert len(awards) == (0 if count == 0 else 1)
    assert awards[0]["Amount"] == 15


async def test_a_clawed_back_award_gives_its_room_back(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    made = await configure(api)
    await boost(api, made["Id"])
    referrer = await create_user(api)
    _, card = await friend_with_card(api, made["Id"], referrer["Id"])
    await topped_up(api, card, 100)
    await run_job(session_factory)
    assert (await unload(api, card, 10)).status_code == 200
    await run_job(session_factory)
    (award,) = of_type(await rewards(api, referrer["Id"]), "BOOST")
    assert award["Stage"] == "CANCELLED"
    (read,) = await boosts(api, made["Id"])
    assert (read["AllocatedAwards"], read["ReservedBudget"]) == (0, 0)


async def test_pause_with_the_current_revision_pauses_and_bumps_it(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    made = await configure(api)
    created = await boost(api, made["Id"])
    response = await pause_boost(api, made["Id"], created["Id"], created["ProgramRevision"])
    assert response.status_code == 200, response.text
    paused = response.json()
    assert paused["Status"] == "PAUSED"
    assert paused["ProgramRevision"] == created["ProgramRevision"] + 1
    referrer = await create_user(api)
    _, card = await friend_with_card(api, made["Id"], referrer["Id"])
    await topped_up(api, card, 100)
    await run_job(session_factory)
    assert of_type(await rewards(api, referrer["Id"]), "BOOST") == []


async def test_pause_with_a_stale_revision_is_409_and_changes_nothing(
    api: httpx.AsyncClient,
) -> None:
    made = await configure(api)
    created = await boost(api, made["Id"])
    await configure(api, HoldDays=3)  # the programme moved on
    response = await pause_boost(api, made["Id"], created["Id"], created["ProgramRevision"])
    assert response.status_code == 409
    assert response.json()["Code"] == "STALE_PROGRAM_REVISION"
    assert (await boosts(api, made["Id"]))[0]["Status"] == "ACTIVE"


async def test_pause_needs_the_expected_revision(api: httpx.AsyncClient) -> None:
    made = await configure(api)
    created = await boost(api, made["Id"])
    response = await api.post(
        f"/api/v2/referrals/programs/{made['Id']}/boosts/{created['Id']}/pause", json={}
    )
    assert response.status_code == 400


async def test_resume_lets_awards_run_again(api: httpx.AsyncClient) -> None:
    made = await configure(api)
    created = await boost(api, made["Id"])
    paused = (await pause_boost(api, made["Id"], created["Id"], created["ProgramRevision"])).json()
    response = await api.post(
        f"/api/v2/referrals/programs/{made['Id']}/boosts/{created['Id']}/resume",
        json={"ExpectedProgramRevision": paused["ProgramRevision"]},
    )
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "ACTIVE"


async def test_a_multiplier_boost_needs_its_multiplier(api: httpx.AsyncClient) -> None:
    made = await configure(api)
    response = await api.post(
        BOOSTS.format(made["Id"]),
        json={"Name": "B", "Kind": "MULTIPLIER", "MaximumAwards": 1, "FundedBudget": 1, **window()},
    )
    assert response.status_code == 400
    assert response.json()["Code"] == "INVALID_REFERRAL_BOOST"


async def test_a_window_that_ends_before_it_starts_is_400(api: httpx.AsyncClient) -> None:
    made = await configure(api)
    span = window()
    response = await api.post(
        BOOSTS.format(made["Id"]),
        json={
            "Name": "B",
            "Kind": "MULTIPLIER",
            "Multiplier": 2,
            "MaximumAwards": 1,
            "FundedBudget": 1,
            "StartsAt": span["EndsAt"],
            "EndsAt": span["StartsAt"],
        },
    )
    assert response.status_code == 400


async def test_an_unknown_boost_is_404(api: httpx.AsyncClient) -> None:
    made = await configure(api)
    response = await pause_boost(
        api, made["Id"], "00000000-0000-4000-8000-000000000000", made["Revision"]
    )
    assert response.status_code == 404
    assert response.json()["Code"] == "REFERRAL_BOOST_NOT_FOUND"
