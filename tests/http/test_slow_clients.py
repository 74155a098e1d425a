"""A slow or stalled client cannot take the platform down.

Against a real `finplat serve` process on the test database: requests whose bodies stall hold
no database connection (nor SQLite's write lock) while they wait, every other tenant is served
meanwhile, and the stalled requests end with 408 or a closed socket, leaving nothing written.
Headers that take too long and idle keep-alive connections are closed by the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.databases import scratch_database
from tests.factories import user_payload
from tests.processes import environment, run_cli, served

STALLED = 50
ORDINARY = 200
BODY_TIMEOUT = 10.0
HEADER_TIMEOUT = 2.0
KEEP_ALIVE_TIMEOUT = 1


@dataclass(frozen=True)
class Platform:
    base_url: str
    host: str
    port: int
    env: dict[str, str]

    async def company(self, name: str) -> str:
        _, out, _ = await run_cli(self.env, "company", "create", "--name", name, "--json")
        return str(json.loads(out)["ApiKey"])


@pytest.fixture(scope="module")
async def platform(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Platform]:
    cwd: Path = tmp_path_factory.mktemp("slow-clients")
    async with scratch_database("slow") as url:
        env = environment(
            url,
            body_timeout_seconds=str(BODY_TIMEOUT),
            header_timeout_seconds=str(HEADER_TIMEOUT),
            keep_alive_timeout_seconds=str(KEEP_ALIVE_TIMEOUT),
            rate_limit="100000/second",
        )
        async with served(env, cwd=cwd) as (base_url, _server):
            host, port = base_url.removeprefix("http://").split(":")
            yield Platform(base_url, host, int(port), env)


async def _stall(
    platform: Platform, api_key: str
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A request that announces 100 bytes of body, sends one, and then nothing. (The writer
    must be kept: a writer collected closes its connection.)"""
    reader, writer = await asyncio.open_connection(platform.host, platform.port)
    writer.write(
        b"POST /api/v2/users HTTP/1.1\r\n"
        b"Host: finplat.test\r\n"
        b"x-api-key: " + api_key.encode() + b"\r\n"
        b"content-type: application/json\r\n"
        b"content-length: 100\r\n\r\n{"
    )
    await writer.drain()
    return reader, writer


async def _ending(reader: asyncio.StreamReader, within: float) -> int | None:
    """The status the server answered with before closing, or None for a bare close."""
    data = await asyncio.wait_for(reader.read(), timeout=within)
    if not data:
        return None
    return int(data.split(b" ", 2)[1])


async def test_stalled_bodies_leave_every_other_tenant_served(platform: Platform) -> None:
    staller_key = await platform.company("Staller")
    tenant_key = await platform.company("Tenant")
    stalled = [await _stall(platform, staller_key) for _ in range(STALLED)]
    endings = [asyncio.create_task(_ending(r, BODY_TIMEOUT + 30)) for r, _ in stalled]
    started = time.monotonic()
    await asyncio.sleep(0.5)  # every stalled request is past its headers, waiting for its body

    limits = httpx.Limits(max_connections=10, keepalive_expiry=0.5)
    async with httpx.AsyncClient(
        base_url=platform.base_url,
        headers={"x-api-key": tenant_key},
        limits=limits,
        timeout=BODY_TIMEOUT,
    ) as tenant:

        async def ordinary(n: int) -> int:
            if n % 4 == 0:
                return (await tenant.post("/api/v2/users", json=user_payload())).status_code
            if n % 10 == 1:
                return (await tenant.get("/healthz")).status_code
            return (await tenant.get("/api/v2/tiers")).status_code

        statuses = await asyncio.gather(*(ordinary(n) for n in range(ORDINARY)))
        served_within = time.monotonic() - started
        assert statuses.count(201) == ORDINARY // 4
        assert all(status in (200, 201) for status in statuses), statuses
        assert not any(ending.done() for ending in endings), (
            "the stalled requests had ended before the other tenant was served"
        )
        assert served_within < BODY_TIMEOUT

    outcomes = await asyncio.gather(*endings)
    assert set(outcomes) <= {408, None}, outcomes
    assert time.monotonic() - started >= BODY_TIMEOUT - 1
    for _, writer in stalled:
        writer.close()

    async with httpx.AsyncClient(
        base_url=platform.base_url, headers={"x-api-key": staller_key}
    ) as staller:
        users = await staller.get("/api/v2/users")
        assert users.status_code == 200
        assert users.json()["Items"] == []


async def test_a_body_that_stops_is_answered_408_with_the_standard_error(
    platform: Platform,
) -> None:
    api_key = await platform.company("Half a body")
    reader, writer = await _stall(platform, api_key)
    data = await asyncio.wait_for(reader.read(), timeout=BODY_TIMEOUT + 30)
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 ")
    assert b"connection: close" in head.lower()
    error = json.loads(body)
    assert error["Code"] == "REQUEST_TIMEOUT"
    assert error["Status"] == 408


async def test_a_connection_that_sends_nothing_is_closed(platform: Platform) -> None:
    reader, writer = await asyncio.open_connection(platform.host, platform.port)
    started = time.monotonic()
    assert await asyncio.wait_for(reader.read(), timeout=HEADER_TIMEOUT + 30) == b""
    assert time.monotonic() - started >= HEADER_TIMEOUT - 0.5
    writer.close()


async def test_headers_that_stop_halfway_are_answered_408(platform: Platform) -> None:
    reader, writer = await asyncio.open_connection(platform.host, platform.port)
    writer.write(b"GET /api/v2/tiers HTTP/1.1\r\nHost: finplat.test\r\nx-api-")
    await writer.drain()
    status = await _ending(reader, HEADER_TIMEOUT + 30)
    assert status == 408
    writer.close()


async def test_headers_sent_a_byte_at_a_time_cannot_outlast_the_deadline(
    platform: Platform,
) -> None:
    reader, writer = await asyncio.open_connection(platform.host, platform.port)
    started = time.monotonic()
    ended = asyncio.create_task(_ending_or_reset(reader, HEADER_TIMEOUT + 30))
    request = b"GET /api/v2/tiers HTTP/1.1\r\nHost: finplat.test\r\nx-api-key: fp_test_x\r\n"
    with contextlib.suppress(ConnectionError):
        for byte in request:  # 0.25 s apart: about 18 s for the whole header
            if ended.done():
                break
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(0.25)
    assert await ended in (408, None)
    assert time.monotonic() - started < HEADER_TIMEOUT + 10
    writer.close()


async def _ending_or_reset(reader: asyncio.StreamReader, within: float) -> int | None:
    """As `_ending`; a connection reset (the client wrote after the server closed) counts as
    a close."""
    try:
        return await _ending(reader, within)
    except ConnectionError:
        return None


async def test_an_idle_keep_alive_connection_is_closed(platform: Platform) -> None:
    reader, writer = await asyncio.open_connection(platform.host, platform.port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: finplat.test\r\n\r\n")
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=30)
    assert head.startswith(b"HTTP/1.1 200 ")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    await reader.readexactly(length)
    idle_from = time.monotonic()
    assert await asyncio.wait_for(reader.read(), timeout=KEEP_ALIVE_TIMEOUT + 30) == b""
    assert time.monotonic() - idle_from >= KEEP_ALIVE_TIMEOUT - 0.5
    writer.close()
