"""Wire types shared by the payments sub-domains."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BeforeValidator, WithJsonSchema


def _instant(value: Any) -> datetime:
    """An ISO 8601 date-time with a time zone, as a string (never a number)."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError("Must be an ISO 8601 date-time, e.g. 2026-12-01T12:00:00Z.") from None
    else:
        raise ValueError("Must be an ISO 8601 date-time string, e.g. 2026-12-01T12:00:00Z.")
    if parsed.tzinfo is None:
        raise ValueError("Must carry a time zone, e.g. 2026-12-01T12:00:00Z.")
    return parsed


Instant = Annotated[
    datetime,
    BeforeValidator(_instant),
    WithJsonSchema({"type": "string", "format": "date-time", "examples": ["2026-12-01T12:00:00Z"]}),
]
"""A point in time a caller sends (strict models take it as a string with its time zone)."""
