"""The reward ledger: rewards from real events (sign-up, identity approval, top-ups), holds,
clawback, release and payment by card credit from the company's rewards account."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.reconciliation import service as reconciliation
from finplat.referrals.computation import recompute
from tests.cards.funding.outcome_steps import clear_faults
from tests.cards.funding.steps import card_balance, unload
from tests.conftest import Tenant
from tests.onboarding import create_user, set_fault
from tests.referrals.steps import (
    approve,
    card_of,
    configure,
    days_later,
    friend_with_card,
    fund_rewards,
    history,
    overview,
    pay,
    referred,
    rewards,
    run_job,
    topped_up,
)

Factory = async_sessionmaker[AsyncSession]


def by_type(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {str(item["EventType"]): item for item in items}


async def test_the_welcome_reward_waits_for_the_friends_approval(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    program = await configure(api)
    referrer = await create_user(api)
    friend = await referred(api, program["Id"], referrer["Id"])
    (welcome,) = await rewards(api, friend["Id"])
    assert (welcome["EventType"], welcome["BeneficiaryRole"]) == ("WELCOME", "REFERRED")
    assert (welcome["Stage"], welcome["Amount"], welcome["Currency"]) == ("PENDING", 5, "USD")
    assert welcome["Holds"][0]["Reason"] == "AWAITING_KYC"
    await approve(api, friend)
    await run_job(session_factory)
    (held,) = await rewards(api, friend["Id"])
    assert held["Stage"] == "HELD"
    assert held["Holds"][0]["ReleasesAt"] is not None


async def test_a_friends_top_up_earns_commission_and_qualification(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    program = await configure(api)
    referrer = await create_user(api, FirstName="Grace")
    friend, card = await friend_with_card(api, program["Id"], referrer["Id"])
    await topped_up(api, card, 100)
    await run_job(session_factory)
    earned = by_type(await rewards(api, referrer["Id"]))
    assert set(earned) == {"TOPUP", "QUALIFICATION"}
    commission = earned["TOPUP"]
    assert (commission["BasisAmount"], commission["Amount"]) == (100, 1)  # 100 bps of volume
    assert commission["Stage"] == "HELD"
    assert commission["LevelCode"] == "BRONZE"
    assert commission["FriendAlias"].startswith(friend["FirstName"])
    assert earned["QUALIFICATION"]["Amount"] == 10


async def test_each_top_up_is_rewarded_once(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    program = await configure(api)
    referrer = await create_user(api)
    _, card = await friend_with_card(api, program["Id"], referrer["Id"])
    await topped_up(api, card, 50)
    await run_job(session_factory)
    await run_job(session_factory)
    await topped_up(api, card, 30)
    await run_job(session_factory)
    items = await rewards(api, referrer["Id"])
    assert sorted(i["Amount"] for i in items if i["EventType"] == "TOPUP") == [0.3, 0.5]
    assert [i["EventType"] for i in items].count("QUALIFICATION") == 1


async def test_a_top_up_below_the_minimum_does_not_qualify(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    program = await configure(api, QualifyingTopupMinimum=60)
    referrer = await create_user(api)
    _, card = await friend_with_card(api, program["Id"], referrer["Id"])
    await topped_up(api, card, 50)
    await run_job(session_factory)
    assert set(by_type(await rewards(api, referrer["Id"]))) == {"TOPUP"}


async def test_a_fee_basis_pays_a_share_of_the_fee(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    level = {
        "Code": "BASE",
        "Name": "Base",
        "Threshold": 0,
        "CommissionBasis": "FEE",
        "CommissionBps": 5000,
    }
    program = await configure(api, Levels=[level])
    referrer = await create_user(api)
    _, card = await friend_with_card(api, program["Id"], referrer["Id"])
    await topped_up(api, card, 100)  # the default schedule's fee: 1 % = 1.00
    await run_job(session_factory)
    (commission,) = await rewards(api, referrer["Id"])
    assert (commission["BasisAmount"], commission["Amount"]) == (1, 0.5)
    assert commission["Explanation"]["Basis"] == "FEE"


async def test_every_amount_is_what_its_explanation_says(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    program = await configure(api)
    referrer = await create_user(api)
    friend, card = await friend_with_card(api, program["Id"], referrer["Id"])
    await topped_up(api, card, "33.33")
    await run_job(session_factory)
    items = await rewards(api, referrer["Id"]) + await rewards(api, friend["Id"])
    assert len(items) == 3
    for item in items:
        assert Decimal(recompute(item["Explanation"])) / 100 == Decimal(str(item["Amount"]))


async def test_a_hold_releases_after_the_hold_days(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    program = await configure(api, HoldDays=14)
    referrer = await create_user(api)
    _, card = await friend_with_card(api, program["Id"], referrer["Id"])
    await topped_up(api, card, 100)
    await run_job(session_factory)
    days_later(13)
    await run_job(session_factory)
    assert {i["Stage"] for i in await rewards(api, referrer["Id"])} == {"HELD"}
    days_later(2)
    await run_job(session_factory)
    assert {i["Stage"] for i in await rewards(api, referrer["Id"])} == {"PAYABLE"}


async def test_an_unload_within_the_hold_claws_the_rewards_back(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    program = await configure(api)
    referrer = await create_user(api)
    _, card = await friend_with_card(api, program["Id"], referrer["Id"])
    await topped_up(api, card, 100)
    await run_job(session_factory)
    assert (await unload(api, card, 20)).status_code == 200
    await run_job(session_factory)
    items = await rewards(api, referrer["Id"])
    assert {(i["Stage"], i["Status"], i["CancelReason"]) for i in items} == {
        ("CANCELLED", "CANCELLED", "TOPUP_UNLOADED")
    }
    seen = await overview(api)
    # The friend's welcome stands: the friend's approval, not the top-up, gave it.
    assert (seen["PendingLiability"], seen["QualifyingTopupVolume"]) == (5, 0)


async def test_an_unload_after_the_hold_changes_nothing(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    program = await configure(api, HoldDays=1)
    referrer = await create_user(api)
    _, card = await friend_with_card(api, program["Id"], referrer["Id"])
    await topped_up(api, card, 100)
    await run_job(session_factory)
    days_later(2)
    await run_job(session_factory)
    assert (await unload(api, card, 20)).status_code == 200
    await run_job(session_factory)
    assert {i["Stage"] for i in await rewards(api, referrer["Id"])} == {"PAYABLE"}


async def payable_reward(
    api: httpx.AsyncClient, session_factory: Factory
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The referrer's payable qualification reward (10 USD) and the referrer's card."""
    program = await configure(api, HoldDays=0)
    referrer = await create_user(api)
    await approve(api, referrer)
    referrer_card = await card_of(api, referrer)
    _, card = await friend_with_card(api, program["Id"], referrer["Id"])
    await topped_up(api, card, 100)
    await run_job(session_factory)
    days_later(1)
    await run_job(session_factory)
    reward = by_type(await rewards(api, referrer["Id"]))["QUALIFICATION"]
    assert reward["Stage"] == "PAYABLE"
    return reward, referrer_card


async def test_paying_a_reward_credits_the_card_from_the_rewards_account(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    reward, card = await payable_reward(api, session_factory)
    await fund_rewards(api, 100)
    before = await card_balance(api, card)
    response = await pay(api, card["UserId"], reward["Id"], card["Id"], key="pay-1")
    assert response.status_code == 200, response.text
    paid = response.json()
    assert (paid["Stage"], paid["Status"]) == ("PAID", "PAID")
    assert paid["CreditId"]
    assert paid["PaidAt"]
    assert await card_balance(api, card) == before + 10  # no fee on a reward
    again = await pay(api, card["UserId"], reward["Id"], card["Id"], key="pay-1")
    assert again.json()["Stage"] == "PAID"
    assert await card_balance(api, card) == before + 10
    seen = await overview(api)
    assert seen["PaidCommission"] == 10


async def test_a_reward_is_paid_once(api: httpx.AsyncClient, session_factory: Factory) -> None:
    reward, card = await payable_reward(api, session_factory)
    await fund_rewards(api, 100)
    assert (await pay(api, card["UserId"], reward["Id"], card["Id"])).status_code == 200
    response = await pay(api, card["UserId"], reward["Id"], card["Id"])
    assert response.status_code == 409
    assert response.json()["Code"] == "REFERRAL_REWARD_NOT_PAYABLE"


async def test_an_unfunded_rewards_account_leaves_the_reward_payable(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    reward, card = await payable_reward(api, session_factory)
    response = await pay(api, card["UserId"], reward["Id"], card["Id"])
    assert response.status_code == 409
    assert response.json()["Code"] == "REFERRAL_REWARDS_FUNDING_INSUFFICIENT"
    (still,) = [r for r in await rewards(api, card["UserId"]) if r["Id"] == reward["Id"]]
    assert still["Stage"] == "PAYABLE"


async def test_a_held_reward_is_not_paid(api: httpx.AsyncClient, session_factory: Factory) -> None:
    program = await configure(api)
    referrer = await create_user(api)
    await approve(api, referrer)
    referrer_card = await card_of(api, referrer)
    _, card = await friend_with_card(api, program["Id"], referrer["Id"])
    await topped_up(api, card, 100)
    await run_job(session_factory)
    reward = by_type(await rewards(api, referrer["Id"]))["TOPUP"]
    response = await pay(api, referrer["Id"], reward["Id"], referrer_card["Id"])
    assert response.status_code == 409


async def test_a_reward_is_paid_only_to_its_beneficiarys_card(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    reward, card = await payable_reward(api, session_factory)
    stranger = await create_user(api)
    await approve(api, stranger)
    other_card = await card_of(api, stranger)
    response = await pay(api, card["UserId"], reward["Id"], other_card["Id"])
    assert response.status_code == 404


async def test_two_qualified_friends_lift_the_referrer_a_level(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    program = await configure(api)
    referrer = await create_user(api)
    for _ in range(2):
        _, card = await friend_with_card(api, program["Id"], referrer["Id"])
        await topped_up(api, card, 100)
        await run_job(session_factory)
    changes = await history(api, program["Id"], referrer["Id"])
    assert [(c["ToLevel"], c["Reason"]) for c in changes] == [
        ("BRONZE", "JOINED"),
        ("GOLD", "THRESHOLD_REACHED"),
    ]
    _, card = await friend_with_card(api, program["Id"], referrer["Id"])
    await topped_up(api, card, 100)
    await run_job(session_factory)
    items = await rewards(api, referrer["Id"])
    assert items[-2]["LevelCode"] == "GOLD"
    assert (items[-2]["EventType"], items[-2]["Amount"]) == ("TOPUP", 2)  # 200 bps


async def test_the_overview_sums_the_ledger(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    program = await configure(api)
    referrer = await create_user(api)
    _, card = await friend_with_card(api, program["Id"], referrer["Id"])
    await topped_up(api, card, 100)
    await referred(api, program["Id"], referrer["Id"])
    await run_job(session_factory)
    seen = await overview(api)
    assert seen["Program"]["Id"] == program["Id"]
    assert (seen["TotalRelationships"], seen["SuccessfulReferrals"]) == (2, 1)
    # welcome 5 + welcome 5 + commission 1 + qualification 10
    assert seen["PendingLiability"] == 21
    assert (seen["PaidCommission"], seen["QualifyingTopupVolume"]) == (0, 100)
    assert seen["Currency"] == "USD"


async def test_an_overview_without_a_programme_is_empty(api: httpx.AsyncClient) -> None:
    seen = await overview(api)
    assert seen["Program"]["Exists"] is False
    assert (seen["TotalRelationships"], seen["PendingLiability"]) == (0, 0)


async def test_rewards_of_an_unknown_user_are_404(api: httpx.AsyncClient) -> None:
    response = await api.get("/api/v2/users/999999/referrals/rewards")
    assert response.status_code == 404


async def test_a_payment_the_provider_did_not_answer_is_resumed_by_its_key(
    api: httpx.AsyncClient, session_factory: Factory
) -> None:
    reward, card = await payable_reward(api, session_factory)
    await fund_rewards(api, 100)
    before = await card_balance(api, card)
    await set_fault(api, "cardprov", "load", "timeout")
    lost = await pay(api, card["UserId"], reward["Id"], card["Id"], key="pay-lost")
    assert lost.status_code == 503, lost.text
    (waiting,) = [r for r in await rewards(api, card["UserId"]) if r["Id"] == reward["Id"]]
    assert waiting["Stage"] == "PAYING"
    assert (await pay(api, card["UserId"], reward["Id"], card["Id"])).status_code == 409
    await clear_faults(api)
    done = await pay(api, card["UserId"], reward["Id"], card["Id"], key="pay-lost")
    assert done.status_code == 200, done.text
    assert done.json()["Stage"] == "PAID"
    assert await card_balance(api, card) == before + 10


async def test_a_payment_left_paying_is_settled_by_the_job_after_reconciliation(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant, session_factory: Factory
) -> None:
    reward, card = await payable_reward(api, session_factory)
    await fund_rewards(api, 100)
    before = await card_balance(api, card)
    await set_fault(api, "cardprov", "load", "timeout")
    assert (await pay(api, card["UserId"], reward["Id"], card["Id"])).status_code == 503
    await clear_faults(api)
    await run_job(session_factory)  # the funding is still pending: the reward waits
    (waiting,) = [r for r in await rewards(api, card["UserId"]) if r["Id"] == reward["Id"]]
    assert waiting["Stage"] == "PAYING"
    days_later(1)
    await reconciliation.reconcile(
        session_factory, app.state.providers, company_id=tenant.company_id
    )
    await run_job(session_factory)
    (paid,) = [r for r in await rewards(api, card["UserId"]) if r["Id"] == reward["Id"]]
    assert paid["Stage"] == "PAID"
    assert await card_balance(api, card) == before + 10
