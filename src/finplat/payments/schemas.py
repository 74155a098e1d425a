"""Wire types shared by the payments sub-domains.

Their rules depend on today's date, which JSON Schema cannot state: each has a format name of
its own with the rule in words, and the fuzz hooks generate values that keep it
(tests/fuzz/hooks.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BeforeValidator, WithJsonSchema

from finplat.kit.fields import IsoDate

PAYMENT_EXPIRY_FORMAT = "payment-expiry"
START_DATE_FORMAT = "start-date"
END_DATE_FORMAT = "end-date"
DATE_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"


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


PaymentExpiry = Annotated[
    datetime,
    BeforeValidator(_instant),
    WithJsonSchema(
        {
            "type": "string",
            "format": PAYMENT_EXPIRY_FORMAT,
            "description": "An ISO 8601 date-time with its time zone, between one minute and "
            "90 days from now (400 otherwise).",
            "examples": ["2026-12-01T12:00:00Z"],
        }
    ),
]
MandateStartDate = Annotated[
    IsoDate,
    WithJsonSchema(
        {
            "type": "string",
            "format": START_DATE_FORMAT,
            "pattern": DATE_PATTERN,
            "description": "YYYY-MM-DD, today (UTC) or later (400 otherwise).",
            "examples": ["2026-12-01"],
        }
    ),
]
MandateEndDate = Annotated[
    IsoDate,
    WithJsonSchema(
        {
            "type": "string",
            "format": END_DATE_FORMAT,
            "pattern": DATE_PATTERN,
            "description": "YYYY-MM-DD, on or after `StartDate` (400 otherwise): the last day "
            "collections are accepted.",
            "examples": ["2027-12-31"],
        }
    ),
]
