"""The query filters the MOR merchant's lists and analytics share: `currency`, and the `from` /
`to` window as RFC 3339 date-times with their offset (as the voucher reports take them),
`from` inclusive, `to` exclusive."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import Query

from finplat.errors import ValidationFailed
from finplat.kit.money import CURRENCY_CODES, UnknownCurrency, normalize_currency
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


CurrencyQuery = Annotated[
    str | None,
    Query(
        description="Only this currency (ISO 4217 code, or USDC / USDT).",
        json_schema_extra={"enum": list(CURRENCY_CODES)},
    ),
]


def currency_filter(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return normalize_currency(value)
    except UnknownCurrency as exc:
        raise ValidationFailed(validation_errors={"currency": [str(exc)]}) from None
