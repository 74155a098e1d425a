"""Provider timestamps, as card providers send them: ISO 8601 text, Unix seconds or Unix
milliseconds (as numbers or digit strings). Anything missing or unreadable is None."""

from __future__ import annotations

from datetime import UTC, datetime

# Values at or above this are milliseconds (1e11 seconds is the year 5138).
MILLIS_THRESHOLD = 100_000_000_000
# Plausible range: from the Unix epoch to the year 9999.
MAX_SECONDS = 253_402_300_799


def parse(raw: object) -> datetime | None:
    if raw is None or isinstance(raw, bool):
        return None
    if isinstance(raw, str):
        text = raw.strip()
        if not text:
            return None
        if text.isdigit():
            return _epoch(int(text))
        try:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    if isinstance(raw, int | float):
        if raw != raw:  # NaN
            return None
        return _epoch(raw)
    return None


def _epoch(value: float) -> datetime | None:
    seconds = value / 1000 if value >= MILLIS_THRESHOLD else value
    if seconds < 0 or seconds > MAX_SECONDS:
        return None
    return datetime.fromtimestamp(seconds, tz=UTC)
