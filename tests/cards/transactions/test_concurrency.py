"""Real parallel authorizations against PostgreSQL (skipped on SQLite, whose single writer
makes these races impossible by construction)."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest
from sqlalchemy import select

from finplat.cards.models import Card
from finplat.cards.transactions import follow_up
from finplat.ledger.verification import verify
from finplat.reconciliation import service as reconciliation
from tests.cards.funding.steps import active_card, card_balance, set_fees, topup
from tests.cards.transactions.steps import ask_in_real_time, provider_card_ref
from tests.databases import backend
from tests.isolated import isolated

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")


async def test_50_parallel_authorizations_never_approve_more_than_the_available_balance() -> None:
    async with isolated("cardtxconc", database_pool_size=60) as env:
        api = env.client
        card = await active_card(api, master=1000.0)
        await set_fees(api, card)
        assert (await topup(api, card, 100)).status_code == 200
        responses = await asyncio.gather(
            *(
                api.post(
                    f"/api/v2/sandbox/cards/{card['Id']}/authorizations",
                    params={"userId": card["UserId"]},
                    json={"Amount": 7, "Currency": "USD", "Merchant": "Race"},
                )
                for _ in range(50)
            )
        )
        assert {r.status_code for r in responses} == {200}, [r.text for r in responses]
        approved = [r.json() for r in responses if r.json()["Approved"]]
        declined = [r.json() for r in responses if not r.json()["Approved"]]
        assert len(approved) == 14  # 14 x 7 = 98 of the 100
        assert {d["DeclineReason"] for d in declined} == {"INSUFFICIENT_FUNDS"}
        assert await card_balance(api, card) == Decimal("2")
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok
        report = await reconciliation.reconcile(
            env.app.state.session_factory, env.app.state.providers
        )
        assert (report.differences, report.errors) == ([], [])


async def test_parallel_follow_up_rounds_charge_a_real_time_decline_fee_once() -> None:
    async with isolated("cardfollowup", database_pool_size=20) as env:
        card = await active_card(env.client, master=1000.0)
        await set_fees(env.client, card, DeclineFee=6)  # more than the card holds: owed
        assert (await topup(env.client, card, 5)).status_code == 200
        declined = await ask_in_real_time(
            env.client,
            env.app.state.settings.provider_callback_secret,
            {
                "companyId": env.company_id,
                "authorizationId": "net-fu-race",
                "cardId": await provider_card_ref(env.app, card),
                "amountMinor": 5000,
                "currency": "USD",
                "merchant": "Race",
            },
        )
        assert declined.json()["Approved"] is False, declined.text
        factory, providers = env.app.state.session_factory, env.app.state.providers
        rounds = await asyncio.gather(*(follow_up.run_due(factory, providers) for _ in range(6)))
        assert sum(rounds) == 1
        async with factory() as session:
            owed = await session.scalar(
                select(Card.outstanding_fee_minor).where(Card.id == card["Id"])
            )
        assert owed == 600
