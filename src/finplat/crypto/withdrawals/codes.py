"""The one-time code that confirms a wallet withdrawal: six digits from the system's secure
random source, emailed to the user through the messaging provider (the voucher redemptions'
`CodeMailer`, and the sandbox's inbox that reveals it). Only a keyed hash is stored: HMAC-
SHA-256 under a key derived from `FINPLAT_SECRET_KEY`, over the withdrawal's id and the code,
so a copy of the database alone cannot try the million codes offline."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from finplat.config import Settings
from finplat.sealing.keyring import parse_key

DIGITS = 6
PURPOSE = b"finplat/crypto-withdrawal-code"


def new_code() -> str:
    return "".join(secrets.choice("0123456789") for _ in range(DIGITS))


def code_key(settings: Settings) -> bytes:
    """The hashing key: derived from the server's secret key, for this purpose only."""
    secret = parse_key(settings.secret_key.get_secret_value(), name="FINPLAT_SECRET_KEY")
    return hmac.new(secret, PURPOSE, hashlib.sha256).digest()


def code_hash(key: bytes, transfer_id: str, code: str) -> str:
    return hmac.new(key, f"{transfer_id}:{code}".encode(), hashlib.sha256).hexdigest()


def matches(key: bytes, transfer_id: str, code: str, expected: str) -> bool:
    return hmac.compare_digest(expected, code_hash(key, transfer_id, code.strip()))
