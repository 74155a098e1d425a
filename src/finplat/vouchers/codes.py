"""Voucher codes: drawn from the system's secure random source, stored only as a hash.

A code is `VCH-` and five groups of four Crockford base32 characters (100 random bits), read
back forgivingly: any case, with or without the dashes and spaces people add, and with the
letters O, I and L taken for the digits they are confused with. 100 bits make guessing
hopeless and let a plain SHA-256 of the normalised code stand for it (there is no low-entropy
secret for a slow hash to protect); the masked form keeps the last group only.
"""

from __future__ import annotations

import hashlib
import re
import secrets

PREFIX = "VCH"
ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford base32: no I, L, O, U
GROUPS = 5
GROUP_LENGTH = 4
CODE_PATTERN = rf"{PREFIX}(?:-[{ALPHABET}]{{{GROUP_LENGTH}}}){{{GROUPS}}}"
_CONFUSABLE = str.maketrans({"O": "0", "I": "1", "L": "1"})
_SEPARATORS = re.compile(r"[\s-]+")


def new_code() -> str:
    body = "".join(secrets.choice(ALPHABET) for _ in range(GROUPS * GROUP_LENGTH))
    groups = [body[i : i + GROUP_LENGTH] for i in range(0, len(body), GROUP_LENGTH)]
    return "-".join([PREFIX, *groups])


def normalised(code: str) -> str:
    """The code as it is hashed: upper case, no separators, confusable letters as digits."""
    compact = _SEPARATORS.sub("", code.strip().upper())
    if compact.startswith(PREFIX):
        compact = compact[len(PREFIX) :]
    return compact.translate(_CONFUSABLE)


def code_hash(code: str) -> str:
    return hashlib.sha256(f"{PREFIX}:{normalised(code)}".encode()).hexdigest()


def masked(code: str) -> str:
    last = normalised(code)[-GROUP_LENGTH:]
    return "-".join([PREFIX, *["****"] * (GROUPS - 1), last])
