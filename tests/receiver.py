"""A real HTTP webhook receiver on 127.0.0.1 for delivery tests."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from dataclasses import dataclass, field

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes


Responder = Callable[[Received, int], Response]


def always(status: int) -> Responder:
    return lambda _received, _n: Response(status_code=status)


@dataclass
class Receiver:
    """Answers each request with `responder(request, n)`, n = requests seen for its webhook id."""

    responder: Responder = field(default_factory=lambda: always(200))
    delay: float = 0.0
    port: int = 0
    received: list[Received] = field(default_factory=list)
    _server: uvicorn.Server | None = None
    _task: asyncio.Task[None] | None = None

    def __post_init__(self) -> None:
        if not self.port:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                self.port = int(sock.getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://localhost:{self.port}/hooks"

    def by_webhook(self) -> dict[str, list[Received]]:
        grouped: dict[str, list[Received]] = {}
        for item in self.received:
            grouped.setdefault(item.headers["x-service-webhook-id"], []).append(item)
        return grouped

    async def _handle(self, request: Request) -> Response:
        item = Received(dict(request.headers), await request.body())
        self.received.append(item)
        if self.delay:
            await asyncio.sleep(self.delay)
        seen = len(self.by_webhook()[item.headers["x-service-webhook-id"]])
        return self.responder(item, seen)

    async def start(self) -> None:
        app = Starlette(routes=[Route("/hooks", self._handle, methods=["POST"])])
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="off"
        )
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve())
        for _ in range(200):  # up to 10 s
            if self._server.started:
                return
            await asyncio.sleep(0.05)
        raise RuntimeError("receiver did not start")

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task
            self._server = None
