"""An assigned voucher redeemed by real parallel requests against PostgreSQL is redeemed once
(skipped on SQLite, whose single writer makes the race impossible by construction)."""

from __future__ import annotations

import asyncio

import pytest

from finplat.ledger.verification import verify as verify_ledger
from finplat.referrals import accrual
from tests.cards.funding.steps import card_balance
from tests.databases import backend
from tests.isolated import isolated
from tests.onboarding import create_user
from tests.referrals.steps import (
    approve,
    card_of,
    configure,
    days_later,
    friend_with_card,
    fund_rewards,
    topped_up,
)

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")


async def test_20_parallel_redemptions_of_one_voucher_credit_the_card_once() -> None:
    async with isolated("refvoucherconc", database_pool_size=30) as env:
        api = env.client
        factory = env.app.state.session_factory
        program = await configure(api, HoldDays=0, DeliveryMode="VOUCHER")
        referrer = await create_user(api)
        await approve(api, referrer)
        card = await card_of(api, referrer)
        _, friend_card = await friend_with_card(api, program["Id"], referrer["Id"])
        await topped_up(api, friend_card, 100)
        await accrual.run_once(factory)
        days_later(1)
        await accrual.run_once(factory)
        listed = await api.get(f"/api/v2/users/{referrer['Id']}/referrals/vouchers")
        (voucher,) = [v for v in listed.json()["Items"] if v["Amount"] == 10]
        await fund_rewards(api, 100)
        before = await card_balance(api, card)
        url = f"/api/v2/users/{referrer['Id']}/referrals/vouchers/{voucher['AssignmentId']}/redeem"
        responses = await asyncio.gather(
            *(
                api.post(url, json={"CardId": card["Id"]}, headers={"Idempotency-Key": f"r-{i}"})
                for i in range(20)
            )
        )
        codes = sorted(r.status_code for r in responses)
        assert codes == [200] + [409] * 19, [r.text for r in responses]
        assert await card_balance(api, card) == before + 10
        async with factory() as session:
            report = await verify_ledger(session)
            assert report.ok, report.summary()
