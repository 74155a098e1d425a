"""Referral relationships, recorded when the referred user signs up, and the referrer's level."""

from __future__ import annotations

import httpx

from tests.conftest import TenantFactory
from tests.onboarding import create_user
from tests.referrals.steps import configure, history, refer, referred

UNKNOWN_PROGRAM = "00000000-0000-4000-8000-000000000000"


async def test_a_referral_is_recorded_and_the_referrer_joins_at_the_lowest_level(
    api: httpx.AsyncClient,
) -> None:
    program = await configure(api)
    referrer = await create_user(api)
    friend = await create_user(api)
    response = await refer(api, program["Id"], referrer["Id"], friend["Id"])
    assert response.status_code == 201, response.text
    made = response.json()
    assert (made["ReferrerUserId"], made["ReferredUserId"]) == (referrer["Id"], friend["Id"])
    assert made["Status"] == "REFERRED"
    changes = await history(api, program["Id"], referrer["Id"])
    assert [(c["FromLevel"], c["ToLevel"], c["Reason"]) for c in changes] == [
        (None, "BRONZE", "JOINED")
    ]


async def test_a_user_is_referred_once(api: httpx.AsyncClient) -> None:
    program = await configure(api)
    first, second = await create_user(api), await create_user(api)
    friend = await referred(api, program["Id"], first["Id"])
    response = await refer(api, program["Id"], second["Id"], friend["Id"])
    assert response.status_code == 409
    assert response.json()["Code"] == "ALREADY_REFERRED"


async def test_a_user_cannot_refer_themselves(api: httpx.AsyncClient) -> None:
    program = await configure(api)
    user = await create_user(api)
    response = await refer(api, program["Id"], user["Id"], user["Id"])
    assert response.status_code == 400
    assert response.json()["Code"] == "SELF_REFERRAL"


async def test_a_friend_cannot_refer_their_referrer(api: httpx.AsyncClient) -> None:
    program = await configure(api)
    referrer = await create_user(api)
    friend = await referred(api, program["Id"], referrer["Id"])
    response = await refer(api, program["Id"], friend["Id"], referrer["Id"])
    assert response.status_code == 409
    assert response.json()["Code"] == "REFERRAL_CYCLE"


async def test_an_unknown_user_is_404(api: httpx.AsyncClient) -> None:
    program = await configure(api)
    referrer = await create_user(api)
    response = await refer(api, program["Id"], referrer["Id"], 999_999)
    assert response.status_code == 404
    assert response.json()["Code"] == "USER_NOT_FOUND"


async def test_an_unknown_programme_is_404(api: httpx.AsyncClient) -> None:
    await configure(api)
    referrer, friend = await create_user(api), await create_user(api)
    response = await refer(api, UNKNOWN_PROGRAM, referrer["Id"], friend["Id"])
    assert response.status_code == 404
    assert response.json()["Code"] == "REFERRAL_PROGRAM_NOT_FOUND"


async def test_another_companys_programme_is_404(
    api: httpx.AsyncClient, make_tenant: TenantFactory
) -> None:
    other = await make_tenant("Other Ltd")
    theirs = await configure(other.client)
    await configure(api)
    referrer, friend = await create_user(api), await create_user(api)
    response = await refer(api, theirs["Id"], referrer["Id"], friend["Id"])
    assert response.status_code == 404


async def test_a_paused_programme_records_no_referral(api: httpx.AsyncClient) -> None:
    program = await configure(api, Status="PAUSED")
    referrer, friend = await create_user(api), await create_user(api)
    response = await refer(api, program["Id"], referrer["Id"], friend["Id"])
    assert response.status_code == 409
    assert response.json()["Code"] == "REFERRAL_PROGRAM_NOT_ACTIVE"


async def test_user_creation_still_needs_no_referral(api: httpx.AsyncClient) -> None:
    await configure(api)
    assert (await create_user(api))["Id"]
