"""Structured JSON logs and the per-request context: request id, access log, last-resort 500.

Log lines carry identifiers and timings only. Bodies, headers, query strings and exception
messages are never logged, so API keys, secrets and personal data cannot reach the logs.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from finplat.config import Settings
from finplat.errors import InternalError, render_error
from finplat.http.asgi_response import send_json

REQUEST_ID_HEADER = "x-request-id"
_SAFE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")

log = structlog.get_logger("finplat.http")


def configure_logging(settings: Settings) -> None:
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if settings.log_format == "json"
        else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.dict_tracebacks,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelName(settings.log_level)
        ),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stdout),
        cache_logger_on_first_use=False,
    )


def _incoming_request_id(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == REQUEST_ID_HEADER.encode():
            candidate = value.decode("latin-1")
            return candidate if _SAFE_REQUEST_ID.match(candidate) else None
    return None


def error_frames(exc: BaseException, limit: int = 12) -> list[str]:
    """Where an error happened (file:line in function), without its message or locals,
    which may carry personal data or secrets."""
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if f"{Path('finplat')}/" in f.filename.replace("\\", "/")]
    chosen = (own[-limit + 3 :] + frames[-3:]) if own else frames[-limit:]
    return [f"{Path(f.filename).name}:{f.lineno} in {f.name}" for f in chosen]


def _route_template(scope: Scope) -> str:
    route = scope.get("route")
    path = getattr(route, "path", None)
    # An unmatched path is reported generically: raw paths may carry ids or typos worth nothing.
    return path if isinstance(path, str) else "<unmatched>"


class RequestContextMiddleware:
    """Pure ASGI middleware (no BaseHTTPMiddleware: it would break context and streaming)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # 128 random bits, as a uuid4's hex but without building a UUID on every request.
        request_id = _incoming_request_id(scope) or f"req_{os.urandom(16).hex()}"
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        started = time.perf_counter()
        status = 500
        response_started = False

        async def send_with_request_id(message: Message) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                response_started = True
                status = message["status"]
                headers = [
                    (k, v) for k, v in message.get("headers", []) if k != REQUEST_ID_HEADER.encode()
                ]
                headers.append((REQUEST_ID_HEADER.encode(), request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_request_id)
        except Exception as exc:
            log.error(
                "unhandled_error",
                request_id=request_id,
                error_type=type(exc).__name__,
                route=_route_template(scope),
                frames=error_frames(exc),
            )
            if not response_started:
                error = InternalError(details=f"Request id: {request_id}")
                body, content_type = render_error(error, str(scope.get("path", "")))
                await send_json(send_with_request_id, 500, body, content_type=content_type)
        finally:
            log.info(
                "request",
                request_id=request_id,
                company_id=state.get("company_id"),
                method=scope.get("method"),
                route=_route_template(scope),
                status=status,
                latency_ms=round((time.perf_counter() - started) * 1000, 2),
            )
