"""Refuse request bodies over the configured size with 413 and the standard error body.

Checked against `Content-Length` before anything is read, and counted while reading for
bodies sent without it (chunked), so an oversized body is never buffered whole. File uploads
(`multipart/form-data`, such as ten scanned verification documents) have their own, larger
limit.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from finplat.asgi_response import send_json
from finplat.errors import ApiError


class PayloadTooLarge(ApiError):
    status = 413
    code = "PAYLOAD_TOO_LARGE"
    message = "The request body is too large."


class BodySizeLimitMiddleware:
    def __init__(self, app: ASGIApp, *, max_bytes: int, max_upload_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_upload_bytes = max_upload_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", []))
        is_upload = headers.get(b"content-type", b"").lower().startswith(b"multipart/form-data")
        limit = self.max_upload_bytes if is_upload else self.max_bytes
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._refuse(send, limit)
            return
        received = 0
        refused = False

        async def counting_receive() -> Message:
            # FastAPI turns any error raised while it reads the body into a 400, so the 413 is
            # sent from here and the app is told the client went away.
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    refused = True
                    await self._refuse(send, limit)
                    return {"type": "http.disconnect"}
            return message

        async def send_unless_refused(message: Message) -> None:
            if not refused:
                await send(message)

        await self.app(scope, counting_receive, send_unless_refused)

    async def _refuse(self, send: Send, limit: int) -> None:
        error = PayloadTooLarge(f"The request body is larger than {limit} bytes.")
        body = json.dumps(error.body().model_dump(mode="json")).encode()
        await send_json(send, error.status, body, close=True)
