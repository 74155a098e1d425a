"""Rewards delivered as vouchers assigned to their beneficiary: assigned once when released,
listed in the spec's shape, redeemed onto the user's own card from the rewards account, and
expired (the reward cancelled) when not redeemed in `VoucherClaimDays`."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from tests.cards.funding.steps import card_balance
from tests.onboarding import create_user
from tests.referrals.steps import (
    approve,
    card_of,
    configure,
    days_later,
    friend_with_card,
    fund_rewards,
    pay,
    rewards,
    run_job,
    topped_up,
)

Factory = async_sessionmaker[AsyncSession]


async def assigned(api: httpx.AsyncClient, user_id: int) -> list[dict[str, Any]]:
    response = await api.get(f"/api/v2/users/{user_id}/referrals/vouchers")
    assert response.status_code == 200, response.text
    return list(response.json()["Items"])


async def redeem(
    api: httpx.AsyncClient, user_id: int, assignment_id: str, card_id: int, key: str | None = None
) -> httpx.Response:
    headers = {"Idempotency-Key": key} if key else {}
    return await api.post(
        f"/api/v2/users/{user_id}/referrals/vouchers/{assignment_id}/redeem",
        json={"CardId": card_id},
        headers=headers,
    )


async def voucher_programme_released(
    api: httpx.AsyncClient, session_factory: Factory
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The referrer's card and their qualification voucher (10 USD), assigned on release."""
    await configure(api, HoldDays=0, DeliveryMode="VOUCHER", VoucherClaimDays=7)
    program = (await api.get("/api/v2/admin/referrals/program")).json()
    referrer = await create_user(api)
    await approve(api, referrer)
    referrer_card = await card_of(api, referrer)
    _, card = await friend_with_card(api, program["Id"], referrer["Id"])
    await topped_up(api, card, 100)
    await run_job(session_factory)
    days_later(1)
    await run_job(session_factory)
    (voucher,) = [v for v in await assigned(api, referrer["Id"]) if v["Amount"] == 10]
    return referrer_card, voucher


async def test_a_voucher_programme_assigns_each_released_reward_a_voucher(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    card, voucher = await voucher_programme_released(api, session_factory)
    assert voucher["Status"] == "ASSIGNED"
    assert (voucher["Currency"], voucher["Source"]) == ("USD", "REFERRAL_REWARD")
    assert voucher["Redemption"] is None
    assert voucher["Name"] == "Referral qualification reward"
    assert voucher["AssignmentId"] != voucher["VoucherId"]
    assert voucher["ReferralProgramId"]
    (reward,) = [
        r for r in await rewards(api, card["UserId"]) if r["Id"] == voucher["ReferralCommissionId"]
    ]
    assert (reward["DeliveryMode"], reward["Stage"]) == ("VOUCHER", "PAYABLE")
    assert reward["VoucherId"] == voucher["VoucherId"]
    await run_job(session_factory)  # released rewards are not assigned again
    again = [v for v in await assigned(api, card["UserId"])]
    assert [v["AssignmentId"] for v in again].count(voucher["AssignmentId"]) == 1
    assert len(again) == len({v["ReferralCommissionId"] for v in again})


async def test_the_programme_shows_its_voucher_delivery(api: httpx.AsyncClient) -> None:
    program = await configure(api, DeliveryMode="VOUCHER", VoucherClaimDays=7)
    assert (program["DeliveryMode"], program["VoucherClaimDays"]) == ("VOUCHER", 7)


async def test_redeeming_credits_the_users_card_from_the_rewards_account(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    card, voucher = await voucher_programme_released(api, session_factory)
    await fund_rewards(api, 100)
    before = await card_balance(api, card)
    response = await redeem(api, card["UserId"], voucher["AssignmentId"], card["Id"], key="rv-1")
    assert response.status_code == 200, response.text
    redeemed = response.json()
    assert redeemed["Status"] == "REDEEMED"
    assert redeemed["Redemption"]["CardId"] == card["Id"]
    assert redeemed["Redemption"]["RedeemedAt"]
    assert await card_balance(api, card) == before + 10
    replay = await redeem(api, card["UserId"], voucher["AssignmentId"], card["Id"], key="rv-1")
    assert replay.json()["Status"] == "REDEEMED"
    assert await card_balance(api, card) == before + 10
    (reward,) = [
        r for r in await rewards(api, card["UserId"]) if r["Id"] == voucher["ReferralCommissionId"]
    ]
    assert (reward["Stage"], reward["VoucherId"]) == ("PAID", voucher["VoucherId"])


async def test_an_assigned_voucher_is_redeemed_once(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    card, voucher = await voucher_programme_released(api, session_factory)
    await fund_rewards(api, 100)
    assert (
        await redeem(api, card["UserId"], voucher["AssignmentId"], card["Id"])
    ).status_code == 200
    response = await redeem(api, card["UserId"], voucher["AssignmentId"], card["Id"])
    assert response.status_code == 409
    assert response.json()["Code"] == "REFERRAL_REWARD_NOT_PAYABLE"


async def test_a_voucher_reward_is_not_paid_by_card_credit(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    card, voucher = await voucher_programme_released(api, session_factory)
    await fund_rewards(api, 100)
    response = await pay(api, card["UserId"], voucher["ReferralCommissionId"], card["Id"])
    assert response.status_code == 409
    assert response.json()["Code"] == "REFERRAL_REWARD_DELIVERED_AS_VOUCHER"


async def test_an_unfunded_rewards_account_leaves_the_voucher_assigned(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    card, voucher = await voucher_programme_released(api, session_factory)
    response = await redeem(api, card["UserId"], voucher["AssignmentId"], card["Id"])
    assert response.status_code == 409
    assert response.json()["Code"] == "REFERRAL_REWARDS_FUNDING_INSUFFICIENT"
    (still,) = [
        v
        for v in await assigned(api, card["UserId"])
        if v["AssignmentId"] == voucher["AssignmentId"]
    ]
    assert still["Status"] == "ASSIGNED"


async def test_only_the_assigned_user_redeems_onto_their_own_card(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    card, voucher = await voucher_programme_released(api, session_factory)
    await fund_rewards(api, 100)
    stranger = await create_user(api)
    await approve(api, stranger)
    other_card = await card_of(api, stranger)
    by_stranger = await redeem(api, stranger["Id"], voucher["AssignmentId"], other_card["Id"])
    assert by_stranger.status_code == 404
    assert by_stranger.json()["Code"] == "REFERRAL_VOUCHER_NOT_FOUND"
    onto_other = await redeem(api, card["UserId"], voucher["AssignmentId"], other_card["Id"])
    assert onto_other.status_code == 404


async def test_an_expired_voucher_is_not_redeemed_and_its_reward_is_cancelled(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    card, voucher = await voucher_programme_released(api, session_factory)
    await fund_rewards(api, 100)
    days_later(9)  # VoucherClaimDays 7
    response = await redeem(api, card["UserId"], voucher["AssignmentId"], card["Id"])
    assert response.status_code == 409
    assert response.json()["Code"] == "REFERRAL_VOUCHER_EXPIRED"
    (seen,) = [
        v
        for v in await assigned(api, card["UserId"])
        if v["AssignmentId"] == voucher["AssignmentId"]
    ]
    assert seen["Status"] == "EXPIRED"
    (reward,) = [
        r for r in await rewards(api, card["UserId"]) if r["Id"] == voucher["ReferralCommissionId"]
    ]
    assert (reward["Stage"], reward["CancelReason"]) == ("CANCELLED", "VOUCHER_EXPIRED")


async def test_the_job_expires_vouchers_not_redeemed_in_time(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    card, voucher = await voucher_programme_released(api, session_factory)
    days_later(9)
    counts = await run_job(session_factory)
    assert counts["vouchers_expired"] >= 1
    (reward,) = [
        r for r in await rewards(api, card["UserId"]) if r["Id"] == voucher["ReferralCommissionId"]
    ]
    assert (reward["Stage"], reward["CancelReason"]) == ("CANCELLED", "VOUCHER_EXPIRED")
    response = await redeem(api, card["UserId"], voucher["AssignmentId"], card["Id"])
    assert response.json()["Code"] == "REFERRAL_VOUCHER_EXPIRED"


async def test_a_card_credit_programme_assigns_no_voucher(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    program = await configure(api, HoldDays=0)
    referrer = await create_user(api)
    _, card = await friend_with_card(api, program["Id"], referrer["Id"])
    await topped_up(api, card, 100)
    await run_job(session_factory)
    days_later(1)
    await run_job(session_factory)
    assert await assigned(api, referrer["Id"]) == []
    assert all(r["VoucherId"] is None for r in await rewards(api, referrer["Id"]))


async def test_vouchers_of_an_unknown_user_are_404(api: httpx.AsyncClient) -> None:
    response = await api.get("/api/v2/users/999999/referrals/vouchers")
    assert response.status_code == 404
