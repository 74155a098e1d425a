"""A provider callback as a provider sends it to `/providers/{provider}/callbacks`: the
envelope's exact bytes, signed now."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.providers import inbound
from finplat.providers.names import ExternalProvider


def signed(
    secret: str, *, company_id: int, type_: str, data: dict[str, Any], event_id: str
) -> dict[str, Any]:
    """The keyword arguments (`content`, `headers`) of the callback's POST."""
    body = json.dumps(
        {
            "id": event_id,
            "type": type_,
            "companyId": company_id,
            "createdAt": "2026-11-21T12:00:00Z",
            "data": data,
        }
    ).encode()
    headers = {"content-type": "application/json", **inbound.signature_headers(secret, body)}
    return {"content": body, "headers": headers}


async def received(
    factory: async_sessionmaker[AsyncSession],
    secret: str,
    body: bytes,
    *,
    provider: ExternalProvider,
    alongside: inbound.Alongside | None = None,
) -> inbound.Receipt:
    """`body` signed now and taken through the inbound path, without HTTP."""
    headers = inbound.signature_headers(secret, body)
    return await inbound.receive(
        factory,
        provider=provider,
        body=body,
        signature=headers[inbound.SIGNATURE_HEADER],
        timestamp=headers[inbound.TIMESTAMP_HEADER],
        secret=secret,
        alongside=alongside,
    )
