"""Steps of the referral flows over HTTP."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.kit.clock import set_clock, utcnow
from finplat.referrals import accrual
from tests.cards.funding.steps import fund_master, topup
from tests.cards.steps import ordered_card
from tests.onboarding import create_user, decide, select_tier, start_kyc

PROGRAM = "/api/v2/admin/referrals/program"
OVERVIEW = "/api/v2/admin/referrals/overview"

BRONZE = {
    "Code": "BRONZE",
    "Name": "Bronze",
    "Threshold": 0,
    "CommissionBasis": "VOLUME",
    "CommissionBps": 100,
    "WelcomeReward": 5,
    "QualificationReward": 10,
}
GOLD = {
    "Code": "GOLD",
    "Name": "Gold",
    "Threshold": 2,
    "CommissionBasis": "VOLUME",
    "CommissionBps": 200,
    "WelcomeReward": 5,
    "QualificationReward": 20,
}


def terms(**overrides: Any) -> dict[str, Any]:
    return {
        "LevelBasis": "QUALIFIED_REFERRALS",
        "PayoutCurrency": "USD",
        "HoldDays": 14,
        "QualifyingTopupMinimum": 20,
        "Levels": [BRONZE, GOLD],
        **overrides,
    }


async def configure(api: httpx.AsyncClient, **overrides: Any) -> dict[str, Any]:
    response = await api.put(PROGRAM, json=terms(**overrides))
    assert response.status_code == 200, response.text
    return dict(response.json())


async def program(api: httpx.AsyncClient) -> dict[str, Any]:
    response = await api.get(PROGRAM)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def refer(
    api: httpx.AsyncClient, program_id: str, referrer: int, referred: int
) -> httpx.Response:
    return await api.post(
        f"/api/v2/referrals/programs/{program_id}/relationships",
        json={"ReferrerUserId": referrer, "ReferredUserId": referred},
    )


async def referred(api: httpx.AsyncClient, program_id: str, referrer: int) -> dict[str, Any]:
    """A new user referred by `referrer` at sign-up (identity not yet verified)."""
    friend = await create_user(api)
    response = await refer(api, program_id, referrer, friend["Id"])
    assert response.status_code == 201, response.text
    return friend


async def approve(api: httpx.AsyncClient, user: dict[str, Any]) -> None:
    await start_kyc(api, user["Id"])
    await decide(api, user["Id"], "APPROVED")


async def card_of(api: httpx.AsyncClient, user: dict[str, Any]) -> dict[str, Any]:
    """An active card of an approved user (on Personal Premium)."""
    await select_tier(api, user["Id"], "Personal Premium")
    return await ordered_card(api, user)


async def friend_with_card(
    api: httpx.AsyncClient, program_id: str, referrer: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    friend = await referred(api, program_id, referrer)
    await approve(api, friend)
    return friend, await card_of(api, friend)


async def topped_up(api: httpx.AsyncClient, card: dict[str, Any], value: float | str) -> None:
    await fund_master(api, 10_000)
    response = await topup(api, card, value)
    assert response.status_code == 200, response.text


async def run_job(factory: async_sessionmaker[AsyncSession]) -> dict[str, int]:
    return await accrual.run_once(factory)


def days_later(days: int) -> None:
    later = utcnow() + timedelta(days=days)
    set_clock(lambda: later)


async def rewards(api: httpx.AsyncClient, user_id: int, **params: Any) -> list[dict[str, Any]]:
    response = await api.get(f"/api/v2/users/{user_id}/referrals/rewards", params=params)
    assert response.status_code == 200, response.text
    return list(response.json()["Items"])


async def history(api: httpx.AsyncClient, program_id: str, user_id: int) -> list[dict[str, Any]]:
    response = await api.get(
        f"/api/v2/referrals/programs/{program_id}/members/{user_id}/level-history"
    )
    assert response.status_code == 200, response.text
    return list(response.json()["Items"])


async def overview(api: httpx.AsyncClient) -> dict[str, Any]:
    response = await api.get(OVERVIEW)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def fund_rewards(api: httpx.AsyncClient, amount: float = 1000.0) -> None:
    response = await api.post(
        "/api/v2/sandbox/company/funding",
        json={"Currency": "USD", "Amount": amount, "Account": "REWARDS"},
    )
    assert response.status_code == 200, response.text


async def pay(
    api: httpx.AsyncClient,
    user_id: int,
    reward_id: str,
    card_id: int,
    key: str | None = None,
) -> httpx.Response:
    headers = {"Idempotency-Key": key} if key else {}
    return await api.post(
        f"/api/v2/users/{user_id}/referrals/rewards/{reward_id}/pay",
        json={"CardId": card_id},
        headers=headers,
    )


def window(**overrides: Any) -> dict[str, Any]:
    """A boost's window around now (a day either side)."""
    now = utcnow()
    return {
        "StartsAt": (now - timedelta(days=1)).isoformat(),
        "EndsAt": (now + timedelta(days=1)).isoformat(),
        **overrides,
    }


async def boost(api: httpx.AsyncClient, program_id: str, **body: Any) -> dict[str, Any]:
    terms = {
        "Name": "Double week",
        "Kind": "MULTIPLIER",
        "Multiplier": 2,
        "MaximumAwards": 10,
        "FundedBudget": 100,
        **window(),
        **body,
    }
    response = await api.post(f"/api/v2/referrals/programs/{program_id}/boosts", json=terms)
    assert response.status_code == 201, response.text
    return dict(response.json())


async def pause_boost(
    api: httpx.AsyncClient, program_id: str, boost_id: str, revision: int
) -> httpx.Response:
    return await api.post(
        f"/api/v2/referrals/programs/{program_id}/boosts/{boost_id}/pause",
        json={"ExpectedProgramRevision": revision},
    )


async def boosts(api: httpx.AsyncClient, program_id: str) -> list[dict[str, Any]]:
    response = await api.get(f"/api/v2/referrals/programs/{program_id}/boosts")
    assert response.status_code == 200, response.text
    return list(response.json()["Boosts"])


async def enrol(
    api: httpx.AsyncClient, program_id: str, user_id: int, **body: Any
) -> httpx.Response:
    return await api.post(
        f"/api/v2/referrals/programs/{program_id}/community/members",
        json={"UserId": user_id, "Plan": "AMBASSADOR", "L2Bps": 50, "L3Bps": 25, **body},
    )


async def revoke(
    api: httpx.AsyncClient, program_id: str, user_id: int, body: dict[str, Any] | None = None
) -> httpx.Response:
    return await api.post(
        f"/api/v2/referrals/programs/{program_id}/community/members/{user_id}/revoke",
        json={"Reason": "Agreement ended"} if body is None else body,
    )
