"""Payee verification tokens: one-time, random, stored only as a hash, short-lived.

The token is 8 characters from a 32-character alphabet without look-alikes (no 0/O, 1/I):
40 bits from `secrets`, easy to read out and type. With at most `MAX_ATTEMPTS` wrong tries
per payee, guessing succeeds with probability 5 / 2^40. Only SHA-256 of the payee id and the
token is stored (binding the hash to its payee), and presented tokens are compared in
constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import timedelta

ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
LENGTH = 8
TOKEN_PATTERN = r"^[2-9A-HJ-NP-Z]{8}$"  # noqa: S105 (a shape, not a secret)
LIFETIME = timedelta(minutes=10)
MAX_ATTEMPTS = 5


def new_token() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))


def digest(payee_id: str, token: str) -> str:
    return hashlib.sha256(f"{payee_id}\x1f{token}".encode()).hexdigest()


def matches(payee_id: str, token: str, stored: str | None) -> bool:
    """Whether `token` is the payee's token (constant time; False when none is stored)."""
    presented = digest(payee_id, token)
    return hmac.compare_digest(presented, stored or "0" * 64) and stored is not None
