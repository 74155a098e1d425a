"""Running the real `finplat` executable in tests: servers, workers and CLI commands."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx

FINPLAT = str(Path(sys.executable).parent / "finplat")
STARTUP_ATTEMPTS = 120  # x 0.25 s


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def environment(database_url: str, **settings: str) -> dict[str, str]:
    env = {**os.environ, "FINPLAT_DATABASE_URL": database_url}
    env.update({f"FINPLAT_{k.upper()}": v for k, v in settings.items()})
    return env


async def run_cli(
    env: dict[str, str], *args: str, check: bool = True, cwd: Path | None = None
) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        FINPLAT,
        *args,
        env=env,
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert proc.returncode is not None
    if check:
        assert proc.returncode == 0, err.decode()
    return proc.returncode, out.decode(), err.decode()


async def wait_until_healthy(base_url: str, server: asyncio.subprocess.Process) -> None:
    async with httpx.AsyncClient(base_url=base_url, timeout=2) as client:
        for _ in range(STARTUP_ATTEMPTS):
            assert server.returncode is None, "server exited during start-up"
            try:
                if (await client.get("/healthz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.25)
    raise AssertionError("server did not become healthy")


async def start(
    env: dict[str, str], *args: str, cwd: Path | None = None
) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        FINPLAT,
        *args,
        env=env,
        cwd=cwd,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )


async def stop(proc: asyncio.subprocess.Process, *, kill: bool = False) -> None:
    if proc.returncode is not None:
        return
    proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
    try:
        await asyncio.wait_for(proc.wait(), timeout=15)
    except TimeoutError:
        proc.kill()
        await proc.wait()


@asynccontextmanager
async def served(
    env: dict[str, str], cwd: Path | None = None
) -> AsyncIterator[tuple[str, asyncio.subprocess.Process]]:
    """`finplat serve` on a free port; yields (base URL, process); stopped afterwards."""
    port = free_port()
    server = await start(env, "serve", "--host", "127.0.0.1", "--port", str(port), cwd=cwd)
    try:
        base_url = f"http://127.0.0.1:{port}"
        await wait_until_healthy(base_url, server)
        yield base_url, server
    finally:
        await stop(server)
