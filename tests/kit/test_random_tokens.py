"""Random hex tokens drawn together."""

from __future__ import annotations

import string

from finplat.kit.random_tokens import hex_tokens


def test_each_token_has_twice_its_bytes_in_hex_digits() -> None:
    tokens = hex_tokens(8, 12)
    assert len(tokens) == 8
    assert all(len(t) == 24 and set(t) <= set(string.hexdigits.lower()) for t in tokens)


def test_tokens_drawn_together_are_distinct() -> None:
    tokens = hex_tokens(64, 16)
    assert len(set(tokens)) == 64


def test_no_tokens_asked_gives_none() -> None:
    assert hex_tokens(0, 16) == []
