"""Serve an ASGI app on a free loopback port inside the test's event loop."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import uvicorn

START_ATTEMPTS = 200  # x 0.05 s


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalServer:
    def __init__(self, app: Any, port: int | None = None) -> None:
        self.app = app
        self.port = port or free_port()
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        config = uvicorn.Config(
            self.app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="off"
        )
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve())
        for _ in range(START_ATTEMPTS):
            if self._server.started:
                return
            await asyncio.sleep(0.05)
        raise RuntimeError("local server did not start")

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task
            self._server = None

    async def __aenter__(self) -> LocalServer:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.stop()
