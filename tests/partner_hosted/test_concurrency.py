"""Real parallel partner-hosted authorizations against PostgreSQL (skipped on SQLite, whose
single writer makes these races impossible by construction)."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest

from finplat.ledger.verification import verify
from finplat.reconciliation import service as reconciliation
from tests.cards.funding.steps import active_card
from tests.databases import backend
from tests.isolated import isolated
from tests.partner_hosted.steps import partner_hosted

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")


async def test_50_parallel_authorizations_never_approve_more_than_the_partner_balance() -> None:
    async with isolated("partnerconc", database_pool_size=60) as env:
        api = env.client
        card = await active_card(api, master=0)
        async with partner_hosted(api, timeout_ms=2000) as (partner, _):
            partner.default_balance = Decimal(100)
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
            user = (await api.get(f"/api/v2/users/{card['UserId']}")).json()["ExternalUserId"]
            assert partner.available(user) == Decimal(2)
        assert {r.status_code for r in responses} == {200}, [r.text for r in responses]
        approved = [r.json() for r in responses if r.json()["Approved"]]
        assert len(approved) == 14  # 14 x 7 = 98 of the partner's 100
        declined = {r.json()["DeclineReason"] for r in responses if not r.json()["Approved"]}
        assert declined == {"INSUFFICIENT_FUNDS"}
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok
        report = await reconciliation.reconcile(
            env.app.state.session_factory, env.app.state.providers
        )
        assert (report.differences, report.errors) == ([], [])
