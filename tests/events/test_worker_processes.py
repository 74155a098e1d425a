"""Killing a `finplat worker` in the middle of a backlog loses no webhook."""

from __future__ import annotations

import asyncio
import json

from sqlalchemy import select

from finplat.events.models import WebhookDelivery
from tests.isolated import isolated
from tests.processes import environment, start, stop
from tests.receiver import Receiver

EVENTS = 20


async def test_killing_the_worker_mid_backlog_loses_nothing() -> None:
    receiver = Receiver(delay=0.2)
    await receiver.start()
    try:
        async with isolated("worker") as env:
            await env.client.put("/api/v2/company/configuration", json={"WebhookUrl": receiver.url})
            event_ids = {
                (await env.client.post("/api/v2/webhooks/test")).json()["EventId"]
                for _ in range(EVENTS)
            }
            worker_env = environment(
                env.url,
                webhook_lease_seconds="1",
                webhook_batch_size="4",
                webhook_poll_seconds="0.1",
            )
            first = await start(worker_env, "worker")
            for _ in range(300):  # until it is mid-backlog (at most 30 s)
                if len(receiver.received) >= 4:
                    break
                await asyncio.sleep(0.1)
            await stop(first, kill=True)
            assert len({json.loads(r.body)["id"] for r in receiver.received}) < EVENTS

            second = await start(worker_env, "worker")
            try:
                for _ in range(600):  # at most 60 s
                    if {json.loads(r.body)["id"] for r in receiver.received} == event_ids:
                        break
                    await asyncio.sleep(0.1)
            finally:
                await stop(second)
            assert {json.loads(r.body)["id"] for r in receiver.received} == event_ids
            async with env.app.state.session_factory() as session:
                statuses = (await session.execute(select(WebhookDelivery.status))).scalars().all()
            assert set(statuses) == {"succeeded"}
    finally:
        await receiver.stop()
