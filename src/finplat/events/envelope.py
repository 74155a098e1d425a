"""The webhook envelope `{id, type, domain, provider, timestamp, data}`, serialised once."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from finplat.kit.money import amount_for_json, exact_json_numbers

PLATFORM_PROVIDER = "finplat"


def new_event_id() -> str:
    return f"evt_{uuid.uuid4().hex}"


def new_delivery_id() -> str:
    return f"whd_{uuid.uuid4().hex}"


def timestamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return amount_for_json(value)
    if isinstance(value, datetime):
        return timestamp(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def render(
    *,
    event_id: str,
    type_: str,
    domain: str,
    provider: str,
    created_at: datetime,
    data: dict[str, Any],
) -> str:
    envelope = {
        "id": event_id,
        "type": type_,
        "domain": domain,
        "provider": provider,
        "timestamp": timestamp(created_at),
        "data": data,
    }
    rendered = json.dumps(
        envelope, separators=(",", ":"), ensure_ascii=False, default=_json_default
    )
    return exact_json_numbers(rendered.encode()).decode()


def data_of(body: str) -> dict[str, Any]:
    """The envelope's `data`, amounts as exact decimals."""
    data: dict[str, Any] = json.loads(body, parse_float=Decimal)["data"]
    return data
