"""`RequestBodyGuard`: a body must arrive whole within its deadline (408 otherwise), uploads get
time in proportion to their size, and once the body is in nothing more is timed."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator

from starlette.types import Message, Receive, Scope, Send

from finplat.http.request_body import RequestBodyGuard

BODY_TIMEOUT = 0.3
UPLOAD_TIMEOUT = 0.3
UPLOAD_RATE = 1_000  # bytes per second


class Reading:
    """An app that reads the whole body, then answers 200 with how many bytes it got."""

    def __init__(self, then_wait: float = 0.0) -> None:
        self.then_wait = then_wait
        self.disconnected = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self.disconnected = True
                return
            size += len(message.get("body", b""))
            if not message.get("more_body", False):
                break
        if self.then_wait:
            # Waiting for the client after the body (as a streaming answer does) is not timed.
            with_wait = asyncio.ensure_future(receive())
            await asyncio.sleep(self.then_wait)
            assert not with_wait.done()
            with_wait.cancel()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": str(size).encode()})


def guard(app: Reading) -> RequestBodyGuard:
    return RequestBodyGuard(
        app,
        max_bytes=10_000,
        max_upload_bytes=100_000,
        body_timeout=BODY_TIMEOUT,
        upload_timeout=UPLOAD_TIMEOUT,
        upload_rate=UPLOAD_RATE,
    )


def scope(length: int, content_type: bytes = b"application/json") -> Scope:
    return {
        "type": "http",
        "method": "POST",
        "path": "/",
        "headers": [(b"content-type", content_type), (b"content-length", str(length).encode())],
    }


async def chunks(parts: list[bytes], every: float, then_stall: bool) -> AsyncIterator[Message]:
    for i, part in enumerate(parts):
        if i:
            await asyncio.sleep(every)
        last = i == len(parts) - 1 and not then_stall
        yield {"type": "http.request", "body": part, "more_body": not last}
    await asyncio.Event().wait()  # the client sends nothing more


async def run(
    app: Reading, scope_: Scope, parts: list[bytes], every: float = 0.0, stall: bool = False
) -> tuple[list[Message], float]:
    messages = chunks(parts, every, stall)
    sent: list[Message] = []

    async def receive() -> Message:
        return await anext(messages)

    async def send(message: Message) -> None:
        sent.append(message)

    started = time.monotonic()
    await asyncio.wait_for(guard(app)(scope_, receive, send), timeout=30)
    return sent, time.monotonic() - started


def answer(sent: list[Message]) -> tuple[int, bytes]:
    starts = [m for m in sent if m["type"] == "http.response.start"]
    assert len(starts) == 1, sent
    return starts[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


async def test_a_body_that_stops_is_answered_408_after_the_body_timeout() -> None:
    app = Reading()
    sent, took = await run(app, scope(100), [b"{"], stall=True)
    status, body = answer(sent)
    assert status == 408
    assert json.loads(body)["Code"] == "REQUEST_TIMEOUT"
    assert (b"connection", b"close") in sent[0]["headers"]
    assert app.disconnected  # the app is told the client went away, and its answer dropped
    assert BODY_TIMEOUT <= took < BODY_TIMEOUT + 2


async def test_a_body_that_arrives_in_time_is_read_whole() -> None:
    sent, _ = await run(Reading(), scope(4), [b"{", b"  ", b"}"], every=0.05)
    assert answer(sent) == (200, b"4")


async def test_an_upload_gets_time_in_proportion_to_its_size() -> None:
    # 1,000 bytes at 1,000 bytes a second: 1.3 s allowed, far past the JSON body's 0.3 s.
    parts = [b"x" * 100] * 10
    upload = scope(1_000, b"multipart/form-data; boundary=x")
    sent, took = await run(Reading(), upload, parts, every=0.08)
    assert answer(sent) == (200, b"1000")
    assert took > BODY_TIMEOUT


async def test_an_upload_that_stalls_is_answered_408_at_its_own_deadline() -> None:
    upload = scope(1_000, b"multipart/form-data; boundary=x")
    sent, took = await run(Reading(), upload, [b"x" * 100], stall=True)
    assert answer(sent)[0] == 408
    assert UPLOAD_TIMEOUT + 1.0 <= took < UPLOAD_TIMEOUT + 3


async def test_waiting_for_the_client_after_the_body_is_not_timed() -> None:
    sent, _ = await run(Reading(then_wait=2 * BODY_TIMEOUT), scope(2), [b"{}"], stall=False)
    assert answer(sent) == (200, b"2")


async def test_an_oversized_chunked_body_is_still_413() -> None:
    chunked: Scope = {
        "type": "http",
        "method": "POST",
        "path": "/",
        "headers": [(b"content-type", b"application/json")],
    }
    sent, _ = await run(Reading(), chunked, [b"x" * 6_000, b"x" * 6_000], stall=True)
    assert answer(sent)[0] == 413
