"""A real HTTP webhook receiver on 127.0.0.1 for delivery tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.local_server import LocalServer, free_port
from tests.sensitive_data import SCANNER


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    peer: tuple[str, int] | None = None  # the sender's address and port: one per connection


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
    _server: LocalServer | None = None

    def __post_init__(self) -> None:
        self.port = self.port or free_port()

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def url(self) -> str:
        return f"http://localhost:{self.port}/hooks"

    def by_webhook(self) -> dict[str, list[Received]]:
        grouped: dict[str, list[Received]] = {}
        for item in self.received:
            grouped.setdefault(item.headers["x-service-webhook-id"], []).append(item)
        return grouped

    async def _handle(self, request: Request) -> Response:
        peer = (request.client.host, request.client.port) if request.client else None
        item = Received(dict(request.headers), await request.body(), peer)
        SCANNER.check(item.body, "webhook body received on loopback")
        self.received.append(item)
        if self.delay:
            await asyncio.sleep(self.delay)
        seen = len(self.by_webhook()[item.headers["x-service-webhook-id"]])
        return self.responder(item, seen)

    async def start(self) -> None:
        app = Starlette(routes=[Route("/hooks", self._handle, methods=["POST"])])
        self._server = LocalServer(app, self.port)
        await self._server.start()

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop()
            self._server = None
