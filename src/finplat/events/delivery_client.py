"""The HTTP client webhook deliveries are sent with: it connects a host name only to the
addresses that delivery just checked.

The URL keeps the partner's host name, so the `Host` header, TLS SNI and the certificate check
are for the name, and pooled connections are kept per name. Only opening a connection differs:
the network backend looks the name up in the addresses pinned for the request (a context
variable, set around each POST) instead of resolving it again, so a DNS answer that changes
between the check and the connection (DNS rebinding) cannot reach an internal address. A name
with no pinned address is not connected at all.
"""

from __future__ import annotations

import contextvars
import functools
import ssl
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Self

import httpcore
import httpx

from finplat.events.destinations import Destination

_PINNED: contextvars.ContextVar[Destination | None] = contextvars.ContextVar(
    "finplat_webhook_destination", default=None
)


class PinnedNetworkBackend(httpcore.AsyncNetworkBackend):
    """Opens connections to the pinned, checked addresses of the request's host, in order
    (the next only when one cannot be connected)."""

    def __init__(self) -> None:
        self._network = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        destination = _PINNED.get()
        if destination is None or (destination.host, destination.port) != (host, port):
            raise httpcore.ConnectError(f"no checked address for {host}:{port}")
        *others, last = destination.addresses
        for address in others:
            try:
                return await self._network.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except httpcore.ConnectError:
                continue
        return await self._network.connect_tcp(last, port, timeout, local_address, socket_options)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("webhooks are not sent over unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self._network.sleep(seconds)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One TLS context (the CA bundle read once): building one takes tens of milliseconds,
    too long for a client made per call within a card authorization's deadline."""
    return httpx.create_ssl_context()


class _PinnedTransport(httpx.AsyncHTTPTransport):
    def __init__(self, limits: httpx.Limits) -> None:
        super().__init__(verify=_ssl_context(), trust_env=False, limits=limits)
        # httpx takes no network backend, so its pool is replaced by one with ours and the
        # same settings (httpx's request and error mapping around `_pool` stay as they are).
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=_ssl_context(),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=PinnedNetworkBackend(),
        )


class DeliveryClient:
    """POSTs to a `Destination`: to its name, connected only to its checked addresses."""

    def __init__(self, *, timeout: float, headers: dict[str, str]) -> None:
        self._http = httpx.AsyncClient(
            transport=_PinnedTransport(
                httpx.Limits(max_connections=100, max_keepalive_connections=20)
            ),
            timeout=timeout,
            follow_redirects=False,
            headers=headers,
            trust_env=False,
        )

    async def post(
        self, destination: Destination, *, content: bytes, headers: dict[str, str]
    ) -> httpx.Response:
        async with connecting_to(destination):
            return await self._http.post(destination.url, content=content, headers=headers)

    async def request(
        self, destination: Destination, *, method: str, content: bytes, headers: dict[str, str]
    ) -> httpx.Response:
        async with connecting_to(destination):
            return await self._http.request(
                method, destination.url, content=content or None, headers=headers
            )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()


@asynccontextmanager
async def connecting_to(destination: Destination) -> AsyncIterator[None]:
    """Within: connections to the destination's host go to its checked addresses."""
    token = _PINNED.set(destination)
    try:
        yield
    finally:
        _PINNED.reset(token)
