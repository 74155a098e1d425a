"""A provider callback as a provider sends it to `/providers/{provider}/callbacks`: the
envelope's exact bytes, signed now."""

from __future__ import annotations

import json
from typing import Any

from finplat.providers import inbound


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
