"""finplat's calls to a partner-hosted company's partner (the six partner endpoints).

Every call carries the partner's `X-API-Key` and `X-Service-Signature` (lowercase hex
HMAC-SHA256 of the exact body, keyed by the company's webhook secret: the webhook scheme, so a
partner verifies finplat's calls as it verifies its webhooks; a `GET` signs its empty body).
It connects only to the addresses of `BaseUrl` checked just before the call (as webhook
deliveries do), never follows a redirect, and never waits past its deadline.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import httpx

from finplat.errors import ApiError
from finplat.events.delivery_client import DeliveryClient
from finplat.events.destinations import vetted_destination
from finplat.kit.money import amount_for_json, exact_json_numbers
from finplat.kit.signing import service_signature

USER_AGENT = "finplat-partner-hosted/1"
API_KEY_HEADER = "X-API-Key"
SIGNATURE_HEADER = "X-Service-Signature"
IDEMPOTENCY_HEADER = "Idempotency-Key"


@dataclass(frozen=True)
class Partner:
    """Where and how to reach one company's partner."""

    base_url: str
    api_key: str
    signing_secret: str
    allow_loopback: bool


@dataclass(frozen=True)
class Reply:
    status_code: int | None  # None: no answer (timeout, network error, refused destination)
    body: bytes
    error: str | None


def render(payload: dict[str, Any]) -> bytes:
    """A request body: compact JSON, amounts as exact JSON numbers."""

    def default(value: Any) -> Any:
        if isinstance(value, Decimal):
            return amount_for_json(value)
        raise TypeError(f"not JSON serialisable: {type(value).__name__}")

    rendered = json.dumps(payload, separators=(",", ":"), ensure_ascii=False, default=default)
    return exact_json_numbers(rendered.encode())


def headers(partner: Partner, body: bytes, *, idempotency_id: str | None = None) -> dict[str, str]:
    signed = {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        API_KEY_HEADER: partner.api_key,
        SIGNATURE_HEADER: service_signature(partner.signing_secret, body),
    }
    if idempotency_id is not None:
        signed[IDEMPOTENCY_HEADER] = idempotency_id
    return signed


async def call(
    partner: Partner,
    method: str,
    path: str,
    *,
    body: bytes = b"",
    timeout_seconds: float,
    idempotency_id: str | None = None,
) -> Reply:
    """One request to the partner, answered (any status) or not within `timeout_seconds`,
    the destination check included."""

    async def send() -> Reply:
        try:
            destination = await vetted_destination(
                partner.base_url + path, allow_loopback=partner.allow_loopback
            )
        except ApiError as refused:
            return Reply(None, b"", refused.message[:300])
        async with DeliveryClient(timeout=timeout_seconds, headers={}) as client:
            try:
                response = await client.request(
                    destination,
                    method=method,
                    content=body,
                    headers=headers(partner, body, idempotency_id=idempotency_id),
                )
            except httpx.TimeoutException:
                return Reply(None, b"", "timeout")
            except httpx.HTTPError as exc:
                return Reply(None, b"", f"network error: {type(exc).__name__}")
        return Reply(response.status_code, response.content, None)

    try:
        return await asyncio.wait_for(send(), timeout_seconds)
    except TimeoutError:
        return Reply(None, b"", "timeout")


def json_object(reply: Reply) -> dict[str, Any] | None:
    """The partner's 2xx JSON object answer, or None."""
    if reply.status_code is None or not 200 <= reply.status_code < 300:
        return None
    try:
        parsed = json.loads(reply.body, parse_float=Decimal)
    except (ValueError, UnicodeDecodeError):
        return None
    return parsed if isinstance(parsed, dict) else None


def decimal_of(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | Decimal | str):
        return None
    try:
        number = Decimal(value)
    except InvalidOperation:
        return None
    return number if number.is_finite() else None
