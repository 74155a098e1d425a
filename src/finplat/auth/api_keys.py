"""API key and webhook secret material: generation, hashing, recognisable prefixes.

Keys carry 256 bits of randomness, so a fast SHA-256 digest is a safe lookup hash (there is no
low-entropy password to brute-force); the plain key exists only in the creation response.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import string

_ALPHABET = string.ascii_letters + string.digits
_RANDOM_CHARS = 43  # 43 base62 characters carry just over 256 bits.

LIVE_KEY_PREFIX = "fp_live_"
TEST_KEY_PREFIX = "fp_test_"
OPERATOR_KEY_PREFIX = "fp_op_"
WEBHOOK_SECRET_PREFIX = "whsec_"  # noqa: S105 - a prefix, not a secret
DISPLAY_PREFIX_LENGTH = 12


def _random_token() -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(_RANDOM_CHARS))


def new_api_key(*, sandbox: bool) -> str:
    return (TEST_KEY_PREFIX if sandbox else LIVE_KEY_PREFIX) + _random_token()


def new_operator_key() -> str:
    return OPERATOR_KEY_PREFIX + _random_token()


def is_operator_key(key: str) -> bool:
    """Operator keys are told from company keys by their prefix, before any lookup."""
    return key.startswith(OPERATOR_KEY_PREFIX)


def new_webhook_secret() -> str:
    """`whsec_` + base64 of 32 random bytes: the Standard Webhooks secret format, so receivers
    can verify with the standard libraries as well as with `X-Service-Signature`."""
    return WEBHOOK_SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def hash_api_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def display_prefix(key: str) -> str:
    return key[:DISPLAY_PREFIX_LENGTH]
