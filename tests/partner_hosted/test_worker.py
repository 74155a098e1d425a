"""The partner outbox worker on a database of its own (real commits, parallel deliveries)."""

from __future__ import annotations

from finplat.jobs import partner_worker
from tests.cards.funding.steps import active_card
from tests.isolated import isolated
from tests.partner_hosted.steps import authorize, deliveries, partner_hosted


async def test_one_batch_delivers_every_due_notification_in_parallel() -> None:
    async with isolated("partner_worker") as env:
        card = await active_card(env.client, master=0)
        async with partner_hosted(env.client, fallback="DECLINE") as (partner, _):
            partner.fail_rate = 1.0
            for amount in (10, 20, 30):
                answer = await authorize(env.client, card, amount)
                assert answer["DeclineReason"] == "PARTNER_UNAVAILABLE"
            partner.fail_rate = 0.0
            worker = partner_worker(env.app.state.settings, env.app.state.session_factory)
            assert await worker.run_once() == 3
            assert await worker.run_once() == 0
            assert partner.received["reversals"] == 3
            assert len(partner.applied) == 3
        assert {d.status for d in await deliveries(env.app)} == {"succeeded"}
