"""A velocity rule under real parallel authorizations against PostgreSQL (skipped on SQLite,
whose single writer makes the race impossible by construction)."""

from __future__ import annotations

import asyncio

import pytest

from finplat.ledger.verification import verify
from tests.authorization.steps import bin_range_id, create_rule
from tests.cards.funding.steps import active_card, fund_master, set_fees, topup
from tests.cards.steps import approved_card_user, ordered_card
from tests.databases import backend
from tests.isolated import isolated

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")
N = 5


async def test_a_velocity_rule_of_n_a_day_approves_exactly_n_of_3n_parallel_attempts() -> None:
    async with isolated("ruleconc", database_pool_size=40) as env:
        api = env.client
        card = await active_card(api, master=1000.0)
        await set_fees(api, card)
        assert (await topup(api, card, 100)).status_code == 200
        rule = await api.post(
            "/api/v2/authorization/rules",
            json={
                "ScopeType": "CARD",
                "CardId": card["Id"],
                "RuleType": "VELOCITY",
                "Configuration": {"Window": "DAY", "MaxCount": N},
            },
        )
        assert rule.status_code == 200, rule.text
        responses = await asyncio.gather(
            *(
                api.post(
                    f"/api/v2/sandbox/cards/{card['Id']}/authorizations",
                    params={"userId": card["UserId"]},
                    json={"Amount": 1, "Currency": "USD", "Merchant": "Race"},
                )
                for _ in range(3 * N)
            )
        )
        assert {r.status_code for r in responses} == {200}, [r.text for r in responses]
        approved = [r for r in responses if r.json()["Approved"]]
        assert len(approved) == N
        reasons = {r.json()["DeclineReason"] for r in responses if not r.json()["Approved"]}
        assert reasons == {"RULE_DECLINED"}
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok


async def test_a_user_velocity_rule_counts_exactly_across_the_users_cards_in_parallel() -> None:
    async with isolated("userruleconc", database_pool_size=40) as env:
        api = env.client
        user = await approved_card_user(api)
        cards = [await ordered_card(api, user) for _ in range(3)]
        await fund_master(api, 1000.0)
        await set_fees(api, cards[0])
        for card in cards:
            assert (await topup(api, card, 50)).status_code == 200
        await create_rule(
            api,
            ScopeType="USER",
            UserId=user["Id"],
            BinRangeId=await bin_range_id(api),
            RuleType="VELOCITY",
            Configuration={"Window": "DAY", "MaxCount": N},
        )
        responses = await asyncio.gather(
            *(
                api.post(
                    f"/api/v2/sandbox/cards/{card['Id']}/authorizations",
                    params={"userId": user["Id"]},
                    json={"Amount": 1, "Currency": "USD", "Merchant": "Race"},
                )
                for card in cards * N
            )
        )
        assert {r.status_code for r in responses} == {200}, [r.text for r in responses]
        assert len([r for r in responses if r.json()["Approved"]]) == N
