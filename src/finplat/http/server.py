"""Serving the API with uvicorn, with the timeouts a server facing the internet needs.

uvicorn closes an idle keep-alive connection (`timeout_keep_alive`), but it has no limit on
how long a request's headers may take: a connection that sends nothing, or a byte of its
headers now and then, is kept open forever, a file descriptor and a slot each. Here the
headers of each request must be complete within `header_timeout_seconds` of the connection
opening (or of the request's first byte on a kept-alive connection): otherwise a request
started is answered 408 `REQUEST_TIMEOUT` and the connection closed, and a connection that
sent nothing is just closed. Bodies have their own deadline, in the application
(`finplat.http.request_body`).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from finplat.config import Settings, get_settings
from finplat.http.request_body import RequestTimeout


class HeaderTimedProtocol(HttpToolsProtocol):
    """uvicorn's HTTP/1.1 protocol with a deadline on each request's headers.

    A class uvicorn can import by name (its worker processes rebuild the configuration), so
    the timeout is read from the settings rather than given to it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout = get_settings().header_timeout_seconds
        self._header_deadline: asyncio.TimerHandle | None = None
        self._request_begun = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_deadline()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._request_begun = True
        self._arm_header_deadline()

    def on_headers_complete(self) -> None:
        self._disarm_header_deadline()
        self._request_begun = False
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_deadline()
        super().connection_lost(exc)

    def _arm_header_deadline(self) -> None:
        if self._header_deadline is None:
            self._header_deadline = self.loop.call_later(
                self.header_timeout, self._headers_too_slow
            )

    def _disarm_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_too_slow(self) -> None:
        self._header_deadline = None
        if self.transport.is_closing():
            return
        if self._request_begun and (self.cycle is None or self.cycle.response_complete):
            self.transport.write(_timeout_response(self.header_timeout))
        self.transport.close()


def _timeout_response(seconds: float) -> bytes:
    error = RequestTimeout(f"The request headers did not arrive within {seconds:g} seconds.")
    body = json.dumps(error.body().model_dump(mode="json")).encode()
    head = (
        "HTTP/1.1 408 Request Timeout\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode() + body


def options(settings: Settings) -> dict[str, Any]:
    """The uvicorn options `finplat serve` runs with (beside the app, host, port, workers)."""
    return {
        "http": HeaderTimedProtocol,
        "timeout_keep_alive": settings.keep_alive_timeout_seconds,
        "access_log": False,  # the app writes its own structured access log
        "log_level": settings.log_level.lower(),
    }
