"""The community: multi-level commission (`L2Bps`, `L3Bps`), enrolment and revocation."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from tests.onboarding import create_user
from tests.referrals.steps import (
    configure,
    enrol,
    friend_with_card,
    program,
    referred,
    revoke,
    rewards,
    run_job,
    topped_up,
)

Factory = async_sessionmaker[AsyncSession]


def community(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [i for i in items if i["BeneficiaryRole"] == "COMMUNITY"]


async def chain(api: httpx.AsyncClient, program_id: str) -> tuple[int, int, int]:
    """Users top (L3), middle (L2) and referrer: top referred middle, middle the referrer."""
    top = await create_user(api)
    middle = await referred(api, program_id, top["Id"])
    referrer = await referred(api, program_id, middle["Id"])
    return top["Id"], middle["Id"], referrer["Id"]


async def test_enrolment_reads_back_with_its_parent_and_plan_revision(
    api: httpx.AsyncClient,
) -> None:
    made = await configure(api)
    top, middle, _ = await chain(api, made["Id"])
    response = await enrol(api, made["Id"], middle, AgreementReference="AGR-1", Notes="Signed")
    assert response.status_code == 201, response.text
    member = response.json()
    assert (member["UserId"], member["ParentUserId"], member["Plan"]) == (
        middle,
        top,
        "AMBASSADOR",
    )
    assert (member["L2Bps"], member["L3Bps"], member["Status"]) == (50, 25, "ACTIVE")
    assert member["PlanRevision"] == (await program(api))["Revision"] == made["Revision"] + 1
    assert member["RevokedAt"] is None


async def test_a_user_is_enrolled_once(api: httpx.AsyncClient) -> None:
    made = await configure(api)
    user = await create_user(api)
    assert (await enrol(api, made["Id"], user["Id"])).status_code == 201
    again = await enrol(api, made["Id"], user["Id"])
    assert again.status_code == 409
    assert again.json()["Code"] == "COMMUNITY_MEMBER_EXISTS"


async def test_members_up_the_chain_earn_l2_and_l3(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    made = await configure(api)
    top, middle, referrer = await chain(api, made["Id"])
    assert (await enrol(api, made["Id"], middle)).status_code == 201
    assert (await enrol(api, made["Id"], top)).status_code == 201
    _, card = await friend_with_card(api, made["Id"], referrer)
    await topped_up(api, card, 200)
    await run_job(session_factory)
    (l2,) = community(await rewards(api, middle))
    (l3,) = community(await rewards(api, top))
    assert (l2["EventType"], l2["Amount"]) == ("COMMUNITY_L2", 1)  # 50 bps of 200
    assert (l3["EventType"], l3["Amount"]) == ("COMMUNITY_L3", 0.5)  # 25 bps of 200


async def test_a_non_member_up_the_chain_earns_nothing(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    made = await configure(api)
    top, middle, referrer = await chain(api, made["Id"])
    assert (await enrol(api, made["Id"], top)).status_code == 201
    _, card = await friend_with_card(api, made["Id"], referrer)
    await topped_up(api, card, 200)
    await run_job(session_factory)
    assert community(await rewards(api, middle)) == []
    assert len(community(await rewards(api, top))) == 1


async def test_a_revoked_member_earns_no_further_commission(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    made = await configure(api)
    _, middle, referrer = await chain(api, made["Id"])
    assert (await enrol(api, made["Id"], middle)).status_code == 201
    _, card = await friend_with_card(api, made["Id"], referrer)
    await topped_up(api, card, 200)
    await run_job(session_factory)
    response = await revoke(api, made["Id"], middle)
    assert response.status_code == 200, response.text
    revoked = response.json()
    assert (revoked["Status"], revoked["RevokeReason"]) == ("REVOKED", "Agreement ended")
    assert revoked["RevokedAt"] is not None
    await topped_up(api, card, 200)
    await run_job(session_factory)
    earned = community(await rewards(api, middle))
    assert len(earned) == 1  # the commission before the revocation stays
    assert earned[0]["Stage"] == "HELD"


async def test_revoking_needs_a_reason(api: httpx.AsyncClient) -> None:
    made = await configure(api)
    user = await create_user(api)
    assert (await enrol(api, made["Id"], user["Id"])).status_code == 201
    for body in ({}, {"Reason": ""}):
        response = await revoke(api, made["Id"], user["Id"], body)
        assert response.status_code == 400
    read = await api.get(f"/api/v2/referrals/programs/{made['Id']}/community/members/{user['Id']}")
    assert read.json()["Status"] == "ACTIVE"


async def test_revoking_bumps_the_revision_once(api: httpx.AsyncClient) -> None:
    made = await configure(api)
    user = await create_user(api)
    assert (await enrol(api, made["Id"], user["Id"])).status_code == 201
    before = (await program(api))["Revision"]
    assert (await revoke(api, made["Id"], user["Id"])).status_code == 200
    again = await revoke(api, made["Id"], user["Id"], {"Reason": "Twice"})
    assert again.json()["RevokeReason"] == "Agreement ended"
    assert (await program(api))["Revision"] == before + 1


async def test_revoking_a_non_member_is_404(api: httpx.AsyncClient) -> None:
    made = await configure(api)
    user = await create_user(api)
    response = await revoke(api, made["Id"], user["Id"])
    assert response.status_code == 404
    assert response.json()["Code"] == "COMMUNITY_MEMBER_NOT_FOUND"


async def test_bps_above_10000_is_400(api: httpx.AsyncClient) -> None:
    made = await configure(api)
    user = await create_user(api)
    response = await enrol(api, made["Id"], user["Id"], L2Bps=10_001)
    assert response.status_code == 400
