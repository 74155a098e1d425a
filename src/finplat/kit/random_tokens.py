"""Random hex tokens drawn together: one call to the system's random source for a batch of
them, rather than one per row."""

from __future__ import annotations

import secrets


def hex_tokens(count: int, nbytes: int) -> list[str]:
    """`count` independent random tokens of `nbytes` bytes each, in hex (twice `nbytes` digits),
    as `secrets.token_hex(nbytes)` makes one."""
    width = 2 * nbytes
    digits = secrets.token_hex(nbytes * count)
    return [digits[i : i + width] for i in range(0, width * count, width)]
