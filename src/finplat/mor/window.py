"""The `from` / `to` window the MOR merchant's lists and analytics take: RFC 3339 date-times
with their offset (as the voucher reports take them), `from` inclusive, `to` exclusive."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import Query

from finplat.errors import ValidationFailed
from finplat.vouchers import instants


def _query(name: str, meaning: str) -> object:
    return Query(
        alias=name,
        pattern=instants.RFC3339,
        description=f"{meaning}: a date-time with its offset, e.g. 2026-12-01T00:00:00Z.",
        json_schema_extra={"format": "date-time"},
    )


FromQuery = Annotated[str | None, _query("from", "From this instant (inclusive)")]
ToQuery = Annotated[str | None, _query("to", "Before this instant (exclusive)")]


def instant(value: str | None, name: str) -> datetime | None:
    if value is None:
        return None
    try:
        return instants.parse(value)
    except ValueError as exc:
        raise ValidationFailed(validation_errors={name: [str(exc)]}) from None
