"""One keep-alive HTTP/1.1 connection to the server, written by hand on asyncio streams.

A load generator built on an HTTP client library spends more CPU per request than the server's
cheapest routes do (httpx in one process topped out near 350 requests/s here), and it would
then measure itself. Requests here are a few bytes put together; responses are read by their
`Content-Length` (or chunks).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any


class Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str):
        self.reader = reader
        self.writer = writer
        self.host = host

    @classmethod
    async def open(cls, port: int, host: str = "127.0.0.1") -> Connection:
        reader, writer = await asyncio.open_connection(host, port)
        return cls(reader, writer, f"{host}:{port}")

    def close(self) -> None:
        self.writer.close()

    async def request(
        self,
        method: str,
        target: str,
        *,
        api_key: str | None,
        body: Any = None,
        idempotency_key: str | None = None,
        content: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, bytes]:
        """Send one request (`body` as JSON when given, or `content` as JSON already encoded;
        no API key when `api_key` is None) and read its response: (status, body)."""
        head = f"{method} {target} HTTP/1.1\r\nHost: {self.host}\r\n"
        if api_key is not None:
            head += f"x-api-key: {api_key}\r\n"
        if idempotency_key is not None:
            head += f"Idempotency-Key: {idempotency_key}\r\n"
        for name, value in (headers or {}).items():
            head += f"{name}: {value}\r\n"
        payload = b""
        if body is not None or content is not None:
            payload = (
                content if content is not None else json.dumps(body, separators=(",", ":")).encode()
            )
            head += f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
        elif method != "GET":
            head += "Content-Length: 0\r\n"
        self.writer.write((head + "\r\n").encode() + payload)
        return await read_response(self.reader)


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    length = None
    chunked = False
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value)
        elif name == "transfer-encoding" and "chunked" in value.lower():
            chunked = True
    if chunked:
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            chunk = await reader.readexactly(size + 2)
            if size == 0:
                break
            body += chunk[:-2]
        return status, body
    return status, await reader.readexactly(length or 0)
