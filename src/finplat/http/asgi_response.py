"""A whole JSON response sent straight over ASGI, for middleware that answers a request
itself (no framework `Response` below the routing)."""

from __future__ import annotations

from starlette.types import Send


async def send_json(
    send: Send,
    status: int,
    body: bytes,
    *,
    close: bool = False,
    content_type: str = "application/json",
) -> None:
    """Send `body` (JSON, already encoded) as the response, with its length; `close` asks the
    client to drop the connection (the rest of its request is not read)."""
    headers = [
        (b"content-type", content_type.encode()),
        (b"content-length", str(len(body)).encode()),
    ]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
