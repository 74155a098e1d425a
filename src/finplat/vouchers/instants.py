"""Date-times the voucher API takes: RFC 3339 text with an offset, nothing else.

Pydantic would also take a number as seconds since 1970 and a date-time without an offset;
neither is what the document's `date-time` says, and a window read in the server's zone or
from a float is a window nobody meant.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any

from pydantic import AwareDatetime, BeforeValidator, Field

RFC3339 = r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:[Zz]|[+-]\d{2}:\d{2})$"
_RFC3339 = re.compile(RFC3339)
MUST = "Must be a date-time with its offset, such as 2026-12-01T00:00:00Z."


def _text(value: Any) -> Any:
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not _RFC3339.match(value):
        raise ValueError(MUST)
    return value


def parse(value: str) -> datetime:
    """A query parameter's date-time (already matched against `RFC3339`)."""
    try:
        parsed = datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        raise ValueError(MUST) from None
    if parsed.tzinfo is None:
        raise ValueError(MUST)
    return parsed


Instant = Annotated[
    AwareDatetime,
    BeforeValidator(_text),
    Field(strict=False, description="A date-time with its offset, e.g. 2026-12-01T00:00:00Z."),
]
