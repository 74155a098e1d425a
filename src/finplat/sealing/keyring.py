"""The keys that seal secrets at rest, and the sealed form.

A sealed value is `fps1:<key id>:<base64url(nonce | ciphertext | tag)>`: AES-256-GCM with a
random 96-bit nonce, the prefix and the value's purpose (its column) as associated data, so a
sealed value cannot be moved to another column or have its key id rewritten. The key id is
derived from the key, so a value names the key that opens it: the current key seals, and the
current and previous keys open, which is what a rotation needs.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Iterable

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

VERSION = "fps1"
KEY_BYTES = 32
NONCE_BYTES = 12


class InvalidSecretKey(Exception):
    """A configured key is not 32 bytes in base64. Not a ValueError on purpose: the settings
    validator lets it through as it is, so the error never quotes the configuration."""


class UnreadableSecret(Exception):
    """A stored value that none of the configured keys opens (or that is not sealed)."""


def parse_key(text: str, *, name: str) -> bytes:
    """A key as configured: base64 (standard or URL-safe alphabet) of 32 random bytes."""
    try:
        key = base64.b64decode(text.strip().replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        raise InvalidSecretKey(f"{name} is not base64.") from None
    if len(key) != KEY_BYTES:
        raise InvalidSecretKey(f"{name} must be {KEY_BYTES} bytes in base64, not {len(key)}.")
    return key


def new_key() -> str:
    """A fresh key, as `FINPLAT_SECRET_KEY` takes it."""
    return base64.urlsafe_b64encode(os.urandom(KEY_BYTES)).decode()


def key_id(key: bytes) -> str:
    return hashlib.sha256(b"finplat secret key id:" + key).hexdigest()[:8]


class SecretKeyring:
    """Seals with the current key; opens what the current or a previous key sealed."""

    def __init__(self, current: bytes, previous: Iterable[bytes] = ()) -> None:
        self.current_id = key_id(current)
        self._ciphers = {key_id(key): AESGCM(key) for key in (*previous, current)}

    @classmethod
    def from_config(cls, current: str, previous: str = "") -> SecretKeyring:
        """From `FINPLAT_SECRET_KEY` and the comma-separated `FINPLAT_SECRET_KEY_PREVIOUS`."""
        old = [
            parse_key(text, name=f"FINPLAT_SECRET_KEY_PREVIOUS[{index}]")
            for index, text in enumerate(t for t in previous.split(",") if t.strip())
        ]
        return cls(parse_key(current, name="FINPLAT_SECRET_KEY"), old)

    @property
    def current_prefix(self) -> str:
        """How every value sealed with the current key starts."""
        return f"{VERSION}:{self.current_id}:"

    def seal(self, plaintext: str, *, purpose: str) -> str:
        nonce = os.urandom(NONCE_BYTES)
        prefix = self.current_prefix
        sealed = self._ciphers[self.current_id].encrypt(
            nonce, plaintext.encode(), _associated(prefix, purpose)
        )
        return prefix + base64.urlsafe_b64encode(nonce + sealed).decode()

    def open(self, value: str, *, purpose: str) -> str:
        version, kid, payload = [*value.split(":", 2), "", ""][:3]
        if version != VERSION:
            raise UnreadableSecret(f"A {purpose} value is not sealed.")
        cipher = self._ciphers.get(kid)
        if cipher is None:
            raise UnreadableSecret(
                f"A {purpose} value was sealed with key {kid}, which is not configured: "
                "add it to FINPLAT_SECRET_KEY_PREVIOUS."
            )
        try:
            raw = base64.urlsafe_b64decode(payload)
            opened = cipher.decrypt(
                raw[:NONCE_BYTES], raw[NONCE_BYTES:], _associated(f"{version}:{kid}:", purpose)
            )
        except (binascii.Error, ValueError, InvalidTag):
            raise UnreadableSecret(f"A {purpose} value does not open with key {kid}.") from None
        return opened.decode()

    def is_sealed(self, value: str) -> bool:
        return value.startswith(f"{VERSION}:")


def _associated(prefix: str, purpose: str) -> bytes:
    return f"{prefix}{purpose}".encode()
