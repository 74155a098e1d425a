"""The delivery worker against a real loopback receiver, with time moved by a fake clock so
the 76-hour retry schedule runs in seconds."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select
from starlette.responses import Response

from finplat.events import destinations
from finplat.events.models import WebhookDelivery
from finplat.events.schedule import MAX_ATTEMPTS, RETRY_DELAYS
from finplat.jobs import webhook_worker
from finplat.kit.clock import reset_clock, set_clock
from finplat.kit.signing import verify_service_signature, verify_standard_signature
from tests.isolated import Isolated, isolated
from tests.receiver import Received, Receiver, always

START = datetime(2035, 5, 1, 12, 0, tzinfo=UTC)


class FakeClock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Iterator[FakeClock]:
    fake = FakeClock()
    set_clock(fake)
    yield fake
    reset_clock()


async def deliveries(env: Isolated) -> list[WebhookDelivery]:
    async with env.app.state.session_factory() as session:
        return list((await session.execute(select(WebhookDelivery))).scalars())


async def send_events(env: Isolated, receiver: Receiver, count: int) -> list[str]:
    await env.client.put("/api/v2/company/configuration", json={"WebhookUrl": receiver.url})
    ids = []
    for _ in range(count):
        ids.append((await env.client.post("/api/v2/webhooks/test")).json()["EventId"])
    return ids


async def drive(
    env: Isolated,
    clock: FakeClock,
    *,
    until_done: bool = True,
    max_rounds: int = 80,
    before_round: object = None,
) -> None:
    """Run the worker, jumping the clock to the next due attempt each round."""
    worker = webhook_worker(env.app.state.settings, env.app.state.session_factory)
    async with worker.http_client() as client:
        for _ in range(max_rounds):
            pending = [d for d in await deliveries(env) if d.status in ("pending", "retrying")]
            if not pending:
                return
            clock.now = max(clock.now, min(d.next_attempt_at for d in pending if d.next_attempt_at))
            if callable(before_round):
                await before_round(pending)
            await worker.run_once(client)
    if until_done:
        raise AssertionError("deliveries still pending after the schedule")


def assert_valid(item: Received, secret: str) -> None:
    headers = item.headers
    assert verify_service_signature(secret, item.body, headers["x-service-signature"])
    assert verify_standard_signature(
        secret,
        headers["webhook-id"],
        int(headers["webhook-timestamp"]),
        item.body,
        headers["webhook-signature"],
    )
    assert headers["content-type"] == "application/json"
    assert headers["webhook-id"] == headers["x-service-webhook-id"]


async def test_delivered_event_has_the_envelope_and_valid_signatures(clock: FakeClock) -> None:
    receiver = Receiver()
    await receiver.start()
    try:
        async with isolated("wh") as env:
            [event_id] = await send_events(env, receiver, 1)
            await drive(env, clock)
            [item] = receiver.received
            assert_valid(item, env.webhook_secret)
            assert item.headers["x-service-delivery-attempt"] == "1"
            envelope = json.loads(item.body)
            assert set(envelope) == {"id", "type", "domain", "provider", "timestamp", "data"}
            assert (envelope["id"], envelope["type"]) == (event_id, "webhook.test")
            [delivery] = await deliveries(env)
            assert delivery.status == "succeeded"
    finally:
        await receiver.stop()


async def test_failing_receiver_gets_16_attempts_over_about_76_hours_then_success(
    clock: FakeClock,
) -> None:
    receiver = Receiver(lambda _item, n: Response(status_code=200 if n >= MAX_ATTEMPTS else 503))
    await receiver.start()
    try:
        async with isolated("wh") as env:
            await send_events(env, receiver, 3)
            await drive(env, clock)
            for attempts in receiver.by_webhook().values():
                assert [a.headers["x-service-delivery-attempt"] for a in attempts] == [
                    str(n) for n in range(1, MAX_ATTEMPTS + 1)
                ]
                assert len({a.body for a in attempts}) == 1  # identical bytes every time
                for attempt in attempts:
                    assert_valid(attempt, env.webhook_secret)
            assert {d.status for d in await deliveries(env)} == {"succeeded"}
            elapsed = clock.now - START
            nominal = sum(RETRY_DELAYS, timedelta())
            assert nominal * 0.9 <= elapsed <= nominal * 1.1
            assert timedelta(hours=68) < elapsed < timedelta(hours=84)
    finally:
        await receiver.stop()


async def test_receiver_down_for_the_whole_schedule_then_back_gets_every_event(
    clock: FakeClock,
) -> None:
    receiver = Receiver()
    async with isolated("wh") as env:
        event_ids = await send_events(env, receiver, 4)

        async def recover_before_last_attempt(pending: list[WebhookDelivery]) -> None:
            if not receiver.running and all(d.attempts == MAX_ATTEMPTS - 1 for d in pending):
                await receiver.start()

        try:
            await drive(env, clock, before_round=recover_before_last_attempt)
        finally:
            await receiver.stop()
        got = {json.loads(item.body)["id"] for item in receiver.received}
        assert got == set(event_ids)
        for item in receiver.received:
            assert item.headers["x-service-delivery-attempt"] == str(MAX_ATTEMPTS)
            assert_valid(item, env.webhook_secret)
        assert all(d.attempts == MAX_ATTEMPTS for d in await deliveries(env))


async def test_no_17th_attempt_after_16_failures(clock: FakeClock) -> None:
    receiver = Receiver(always(500))
    await receiver.start()
    try:
        async with isolated("wh") as env:
            await send_events(env, receiver, 1)
            await drive(env, clock)
            clock.now += timedelta(days=30)
            await drive(env, clock)
            assert len(receiver.received) == MAX_ATTEMPTS
            [delivery] = await deliveries(env)
            assert (delivery.status, delivery.attempts) == ("failed", MAX_ATTEMPTS)
    finally:
        await receiver.stop()


@pytest.mark.parametrize("status", [400, 401, 404, 422])
async def test_other_4xx_is_a_permanent_failure_not_retried(clock: FakeClock, status: int) -> None:
    receiver = Receiver(always(status))
    await receiver.start()
    try:
        async with isolated("wh") as env:
            await send_events(env, receiver, 1)
            await drive(env, clock)
            clock.now += timedelta(days=5)
            await drive(env, clock)
            assert len(receiver.received) == 1
            [delivery] = await deliveries(env)
            assert (delivery.status, delivery.last_status_code) == ("failed", status)
    finally:
        await receiver.stop()


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503])
async def test_retryable_statuses_are_retried(clock: FakeClock, status: int) -> None:
    receiver = Receiver(lambda _i, n: Response(status_code=status if n == 1 else 204))
    await receiver.start()
    try:
        async with isolated("wh") as env:
            await send_events(env, receiver, 1)
            await drive(env, clock)
            assert len(receiver.received) == 2
            assert (await deliveries(env))[0].status == "succeeded"
    finally:
        await receiver.stop()


async def test_retry_after_on_429_is_honoured(clock: FakeClock) -> None:
    receiver = Receiver(
        lambda _i, n: (
            Response(status_code=429, headers={"Retry-After": "7200"})
            if n == 1
            else Response(status_code=200)
        )
    )
    await receiver.start()
    try:
        async with isolated("wh") as env:
            await send_events(env, receiver, 1)
            worker = webhook_worker(env.app.state.settings, env.app.state.session_factory)
            async with worker.http_client() as client:
                await worker.run_once(client)
            [delivery] = await deliveries(env)
            assert delivery.next_attempt_at == START + timedelta(hours=2)
    finally:
        await receiver.stop()


async def test_a_failed_attempt_shows_the_delivery_retrying_with_its_error_and_next_attempt(
    clock: FakeClock,
) -> None:
    receiver = Receiver(lambda _i, n: Response(status_code=503 if n == 1 else 200))
    await receiver.start()
    try:
        async with isolated("wh") as env:
            await send_events(env, receiver, 1)
            worker = webhook_worker(env.app.state.settings, env.app.state.session_factory)
            async with worker.http_client() as client:
                await worker.run_once(client)
            [shown] = (await env.client.get("/api/v2/webhooks/deliveries")).json()["Items"]
            assert (shown["Status"], shown["Attempts"], shown["LastStatusCode"]) == (
                "retrying",
                1,
                503,
            )
            assert shown["LastError"] == "the endpoint answered HTTP 503"
            due = datetime.fromisoformat(shown["NextAttemptAt"])
            assert START + RETRY_DELAYS[0] * 0.9 <= due <= START + RETRY_DELAYS[0] * 1.1
    finally:
        await receiver.stop()


async def test_a_retrying_delivery_retried_by_hand_is_sent_by_the_next_worker_pass(
    clock: FakeClock,
) -> None:
    receiver = Receiver(lambda _i, n: Response(status_code=503 if n == 1 else 200))
    await receiver.start()
    try:
        async with isolated("wh") as env:
            await send_events(env, receiver, 1)
            worker = webhook_worker(env.app.state.settings, env.app.state.session_factory)
            async with worker.http_client() as client:
                await worker.run_once(client)
                [delivery] = await deliveries(env)
                retried = await env.client.post(f"/api/v2/webhooks/deliveries/{delivery.id}/retry")
                assert retried.status_code == 202, retried.text
                await worker.run_once(client)  # the clock has not moved: only the retry made it due
            assert [r.headers["x-service-delivery-attempt"] for r in receiver.received] == [
                "1",
                "2",
            ]
            [delivery] = await deliveries(env)
            assert (delivery.status, delivery.attempts, delivery.last_error) == (
                "succeeded",
                2,
                None,
            )
    finally:
        await receiver.stop()


async def test_a_410_parks_the_deliveries_that_were_retrying(clock: FakeClock) -> None:
    receiver = Receiver(always(503))
    await receiver.start()
    try:
        async with isolated("wh") as env:
            await send_events(env, receiver, 2)
            worker = webhook_worker(env.app.state.settings, env.app.state.session_factory)
            async with worker.http_client() as client:
                await worker.run_once(client)
                first, second = sorted(
                    await deliveries(env), key=lambda d: d.next_attempt_at or START
                )
                assert (first.status, second.status) == ("retrying", "retrying")
                assert first.next_attempt_at is not None
                receiver.responder = always(410)
                clock.now = first.next_attempt_at
                await worker.run_once(client)
            states = {d.id: d.status for d in await deliveries(env)}
            assert states == {first.id: "failed", second.id: "endpoint_disabled"}
    finally:
        await receiver.stop()


async def test_410_disables_the_endpoint_until_reconfigured(clock: FakeClock) -> None:
    receiver = Receiver(always(410))
    await receiver.start()
    try:
        async with isolated("wh") as env:
            await send_events(env, receiver, 1)
            await drive(env, clock)
            config = (await env.client.get("/api/v2/company/configuration")).json()
            assert config["WebhookEnabled"] is False
            assert config["WebhookDisabledAt"]
            later = await env.client.post("/api/v2/webhooks/test")
            assert later.status_code == 409
            receiver.responder = always(200)
            await env.client.put("/api/v2/company/configuration", json={"WebhookUrl": receiver.url})
            [failed] = [d for d in await deliveries(env) if d.status == "failed"]
            retried = await env.client.post(f"/api/v2/webhooks/deliveries/{failed.id}/retry")
            assert retried.status_code == 202
            await drive(env, clock)
            assert {d.status for d in await deliveries(env)} == {"succeeded"}
            assert receiver.received[-1].headers["x-service-webhook-id"] == failed.id
    finally:
        await receiver.stop()


class Resolver:
    """Stands in for DNS: the addresses each lookup of any host name answers, in turn."""

    def __init__(self, *answers: list[str]) -> None:
        self.answers = list(answers)
        self.lookups: list[str] = []

    async def __call__(self, host: str, _port: int) -> list[str]:
        self.lookups.append(host)
        return self.answers[0] if len(self.answers) == 1 else self.answers.pop(0)


async def test_delivery_to_a_host_now_resolving_to_a_private_address_is_refused(
    clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Public when configured, private at delivery (DNS rebinding).
    resolver = Resolver(["93.184.216.34"], ["10.1.2.3"])
    monkeypatch.setattr(destinations, "resolve", resolver)
    async with isolated("wh", allow_loopback_webhooks=False) as env:
        url = "https://hooks.example.com/x"
        configured = await env.client.put("/api/v2/company/configuration", json={"WebhookUrl": url})
        assert configured.status_code == 200, configured.text
        assert (await env.client.post("/api/v2/webhooks/test")).status_code == 202
        await drive(env, clock)
        [delivery] = await deliveries(env)
        assert delivery.status == "failed"
        assert "non-public address (10.1.2.3)" in (delivery.last_error or "")


async def test_delivery_connects_to_the_address_it_checked_not_a_new_lookup(
    clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    receiver = Receiver()
    await receiver.start()
    # `.invalid` never resolves: only a connection to the checked address can reach the receiver.
    monkeypatch.setattr(destinations, "resolve", Resolver(["127.0.0.1"]))
    try:
        async with isolated("wh") as env:
            url = f"http://hooks.invalid:{receiver.port}/hooks"
            configured = await env.client.put(
                "/api/v2/company/configuration", json={"WebhookUrl": url}
            )
            assert configured.status_code == 200, configured.text
            assert (await env.client.post("/api/v2/webhooks/test")).status_code == 202
            await drive(env, clock)
            [item] = receiver.received
            assert item.headers["host"] == f"hooks.invalid:{receiver.port}"
            assert_valid(item, env.webhook_secret)
            assert [d.status for d in await deliveries(env)] == ["succeeded"]
    finally:
        await receiver.stop()


class RebindingDns:
    """Stands in for the system resolver (`socket.getaddrinfo`): `host` answers 127.0.0.1 to
    its first `honest` lookups and 127.0.0.2, where nothing listens, to every later one."""

    def __init__(self, host: str, *, honest: int) -> None:
        self.host = host
        self.honest = honest
        self.lookups = 0
        self.real = socket.getaddrinfo

    def __call__(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != self.host:
            return self.real(host, port, *args, **kwargs)
        self.lookups += 1
        address = "127.0.0.1" if self.lookups <= self.honest else "127.0.0.2"
        return self.real(address, port, *args, **kwargs)


async def test_a_name_that_rebinds_after_its_check_is_still_connected_to_the_checked_address(
    clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    receiver = Receiver()
    await receiver.start()
    # One honest answer for the URL check at configuration, one for the check before the
    # attempt; a connection that looked the name up again would go to 127.0.0.2.
    dns = RebindingDns("hooks.rebinding.test", honest=2)
    monkeypatch.setattr(socket, "getaddrinfo", dns)
    try:
        async with isolated("wh") as env:
            url = f"http://hooks.rebinding.test:{receiver.port}/hooks"
            configured = await env.client.put(
                "/api/v2/company/configuration", json={"WebhookUrl": url}
            )
            assert configured.status_code == 200, configured.text
            assert (await env.client.post("/api/v2/webhooks/test")).status_code == 202
            await drive(env, clock)
            assert [d.status for d in await deliveries(env)] == ["succeeded"]
            assert len(receiver.received) == 1
            assert dns.lookups == 2
    finally:
        await receiver.stop()


async def test_two_host_names_at_one_address_do_not_share_a_connection(
    clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A connection is opened, and its TLS verified, for one name: another name's webhook must
    # not travel over it, though both names resolve to the same address.
    receiver = Receiver()
    await receiver.start()
    monkeypatch.setattr(destinations, "resolve", Resolver(["127.0.0.1"]))
    try:
        async with isolated("wh") as env:
            worker = webhook_worker(env.app.state.settings, env.app.state.session_factory)
            async with worker.http_client() as client:
                for name in ("alpha.invalid", "beta.invalid"):
                    url = f"http://{name}:{receiver.port}/hooks"
                    await env.client.put("/api/v2/company/configuration", json={"WebhookUrl": url})
                    assert (await env.client.post("/api/v2/webhooks/test")).status_code == 202
                    await worker.run_once(client)
            first, second = receiver.received
            assert (first.headers["host"], second.headers["host"]) == (
                f"alpha.invalid:{receiver.port}",
                f"beta.invalid:{receiver.port}",
            )
            assert first.peer != second.peer
    finally:
        await receiver.stop()


async def test_delivery_tries_the_next_checked_address_when_one_refuses_connections(
    clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    receiver = Receiver()
    await receiver.start()
    # The receiver listens on 127.0.0.1 only: 127.0.0.2 refuses the connection.
    monkeypatch.setattr(destinations, "resolve", Resolver(["127.0.0.2", "127.0.0.1"]))
    try:
        async with isolated("wh") as env:
            url = f"http://hooks.invalid:{receiver.port}/hooks"
            await env.client.put("/api/v2/company/configuration", json={"WebhookUrl": url})
            assert (await env.client.post("/api/v2/webhooks/test")).status_code == 202
            await drive(env, clock)
            assert len(receiver.received) == 1
            [delivery] = await deliveries(env)
            assert (delivery.status, delivery.attempts) == ("succeeded", 1)
    finally:
        await receiver.stop()


async def test_each_attempt_is_logged(clock: FakeClock) -> None:
    from finplat.events.models import WebhookAttempt

    receiver = Receiver(lambda _i, n: Response(status_code=500 if n < 3 else 200))
    await receiver.start()
    try:
        async with isolated("wh") as env:
            await send_events(env, receiver, 1)
            await drive(env, clock)
            async with env.app.state.session_factory() as session:
                attempts = (
                    await session.execute(
                        select(WebhookAttempt.attempt, WebhookAttempt.status_code).order_by(
                            WebhookAttempt.attempt
                        )
                    )
                ).all()
                total = (
                    await session.execute(select(func.count()).select_from(WebhookAttempt))
                ).scalar()
            assert [tuple(a) for a in attempts] == [(1, 500), (2, 500), (3, 200)]
            assert total == 3
    finally:
        await receiver.stop()
