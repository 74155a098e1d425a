"""Request bodies: no larger than the limits, and whole within their deadline.

Size: refused with 413 against `Content-Length` before anything is read, and counted while
reading for bodies sent without it (chunked), so an oversized body is never buffered whole.
File uploads (`multipart/form-data`, such as ten scanned verification documents) have their
own, larger limit.

Time: a client that stops sending halfway (`Content-Length: 100`, then `{`, then nothing)
must not hold anything for long. The body must have arrived within `body_timeout` of the
request's headers (an upload: within `upload_timeout` plus its size at `upload_rate`
bytes per second); otherwise the request is answered 408 `REQUEST_TIMEOUT` and the connection
closed. No transaction is open meanwhile either: the route class reads the whole body before
its unit of work begins (`finplat.http.routing`). Once the body is complete, waiting for the client
(to notice a disconnect) is not bounded here.
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from finplat.errors import ApiError, render_error
from finplat.http.asgi_response import send_json


class PayloadTooLarge(ApiError):
    status = 413
    code = "PAYLOAD_TOO_LARGE"
    message = "The request body is too large."


class RequestTimeout(ApiError):
    status = 408
    code = "REQUEST_TIMEOUT"
    message = "The request body did not arrive in time."


_DISCONNECT: Message = {"type": "http.disconnect"}


class RequestBodyGuard:
    def __init__(
        self,
        app: ASGIApp,
        *,
        max_bytes: int,
        max_upload_bytes: int,
        body_timeout: float,
        upload_timeout: float,
        upload_rate: int,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_upload_bytes = max_upload_bytes
        self.body_timeout = body_timeout
        self.upload_timeout = upload_timeout
        self.upload_rate = upload_rate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        is_upload = False
        declared: int | None = None
        for name, value in scope["headers"]:
            if name == b"content-type":
                is_upload = value.lower().startswith(b"multipart/form-data")
            elif name == b"content-length" and value.isdigit():
                declared = int(value)
        limit = self.max_upload_bytes if is_upload else self.max_bytes
        if declared is not None and declared > limit:
            await _refuse(
                send, scope, PayloadTooLarge(f"The request body is larger than {limit} bytes.")
            )
            return
        loop = asyncio.get_running_loop()
        allowed = (
            self.upload_timeout + (declared or limit) / self.upload_rate
            if is_upload
            else self.body_timeout
        )
        deadline = loop.time() + allowed
        received = 0
        complete = False
        refused = False  # this guard answered the request
        started = False  # the application began its answer

        async def refuse(error: ApiError) -> Message:
            # FastAPI turns any error raised while it reads the body into a 400, so the
            # guard's answer is sent from here and the app is told the client went away.
            nonlocal refused
            if not started:
                refused = True
                await _refuse(send, scope, error)
            return _DISCONNECT

        async def guarded_receive() -> Message:
            nonlocal received, complete
            if complete:
                return await receive()
            if refused:
                return _DISCONNECT
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                return await refuse(
                    RequestTimeout(f"The request body did not arrive within {allowed:g} seconds.")
                )
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    return await refuse(
                        PayloadTooLarge(f"The request body is larger than {limit} bytes.")
                    )
                complete = not message.get("more_body", False)
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if refused:
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, guarded_receive, guarded_send)


async def _refuse(send: Send, scope: Scope, error: ApiError) -> None:
    body, content_type = render_error(error, str(scope.get("path", "")))
    await send_json(send, error.status, body, close=True, content_type=content_type)
