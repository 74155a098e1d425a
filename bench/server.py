"""`finplat serve` as the benchmark runs it: its own process group (its workers stop with it),
a free port, and samples of the CPU it and its database's backends use."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable

import cpu_accounting
import httpx
from cpu_accounting import CpuSample
from run_database import FINPLAT, ROOT


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    def __init__(self, env: dict[str, str], port: int, workers: int = 1) -> None:
        self.env = env
        self.port = port
        self.workers = workers
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self) -> None:
        cmd = [FINPLAT, "serve", "--port", str(self.port), "--workers", str(self.workers)]
        # Its own process group, so that stopping it also stops uvicorn's worker processes. Its
        # log lines (JSON too) go to stderr: stdout carries the benchmark's figures.
        self.proc = subprocess.Popen(  # noqa: S603
            cmd, env=self.env, cwd=ROOT, start_new_session=True, stdout=sys.stderr
        )
        asyncio.run(self._wait_healthy(self.proc))

    async def _wait_healthy(self, proc: subprocess.Popen[bytes]) -> None:
        async with httpx.AsyncClient(base_url=self.base_url, timeout=2) as client:
            for _ in range(600):
                if proc.poll() is not None:
                    raise RuntimeError(f"finplat serve exited with {proc.returncode}")
                try:
                    if (await client.get("/healthz")).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.1)
        raise RuntimeError("finplat serve did not become healthy within 60 s")

    def cpu_watch(self, database: str | None) -> Callable[[], CpuSample | None]:
        """Samples of the CPU used by the server's processes and `database`'s backends."""
        group = self.pid  # its own session: the group of its workers too
        return lambda: cpu_accounting.sample(group, database, time.monotonic())

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
