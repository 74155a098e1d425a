"""Provider timestamp parsing: ISO 8601, Unix seconds, Unix milliseconds; else None."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from finplat.cards.timestamps import parse

MOMENT = datetime(2026, 7, 1, 12, 30, 15, tzinfo=UTC)


@pytest.mark.parametrize(
    "raw",
    [
        "2026-07-01T12:30:15Z",
        "2026-07-01T14:30:15+02:00",
        "2026-07-01T12:30:15",
        int(MOMENT.timestamp()),
        str(int(MOMENT.timestamp())),
        int(MOMENT.timestamp()) * 1000,
        str(int(MOMENT.timestamp()) * 1000),
    ],
)
def test_provider_formats_parse_to_the_same_moment(raw: object) -> None:
    assert parse(raw) == MOMENT


@pytest.mark.parametrize(
    "raw", [None, "", "   ", "yesterday", "2026-13-40", True, -5, 10**20, float("nan"), {}]
)
def test_missing_or_invalid_is_none(raw: object) -> None:
    assert parse(raw) is None
