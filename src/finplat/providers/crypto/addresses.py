"""The chains' address formats: EIP-55 checksummed hex on the EVM chains (Ethereum, Polygon,
Arbitrum) and base58check `T...` on Tron.

Both the rails (which hand addresses out) and the platform (which checks a destination before
money leaves for it) read addresses here, so a format is written once.
"""

from __future__ import annotations

import hashlib
import re

from Crypto.Hash import keccak

from finplat.providers.crypto.port import Chain

_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_BASE58_INDEX = {c: i for i, c in enumerate(_BASE58)}
_HEX_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
TRON_PREFIX = b"\x41"  # Tron's mainnet address byte: every encoded address starts with T
ACCOUNT_BYTES = 20


def keccak256(data: bytes) -> bytes:
    """Ethereum's Keccak-256 (the original padding, not NIST SHA3-256)."""
    digest = keccak.new(digest_bits=256)
    digest.update(data)
    return digest.digest()


def eip55(account: bytes) -> str:
    """The EIP-55 checksummed spelling of a 20-byte account: each hex letter is upper case
    when the matching nibble of keccak256(lower-case hex) is 8 or more."""
    if len(account) != ACCOUNT_BYTES:
        raise ValueError("an EVM account is 20 bytes")
    lower = account.hex()
    hashed = keccak256(lower.encode("ascii")).hex()
    return "0x" + "".join(
        c.upper() if c.isalpha() and int(hashed[i], 16) >= 8 else c for i, c in enumerate(lower)
    )


def is_evm_address(text: str) -> bool:
    """40 hex digits after `0x`; a mixed-case spelling must carry a valid EIP-55 checksum
    (all lower or all upper case carries none, and is accepted as wallets accept it)."""
    if not _HEX_ADDRESS.fullmatch(text):
        return False
    digits = text[2:]
    if digits == digits.lower() or digits == digits.upper():
        return True
    return eip55(bytes.fromhex(digits)) == text


def _base58_encode(data: bytes) -> str:
    number = int.from_bytes(data, "big")
    encoded = ""
    while number:
        number, remainder = divmod(number, 58)
        encoded = _BASE58[remainder] + encoded
    zeros = len(data) - len(data.lstrip(b"\x00"))
    return "1" * zeros + encoded


def _base58_decode(text: str) -> bytes | None:
    number = 0
    for c in text:
        digit = _BASE58_INDEX.get(c)
        if digit is None:
            return None
        number = number * 58 + digit
    zeros = len(text) - len(text.lstrip("1"))
    body = number.to_bytes((number.bit_length() + 7) // 8, "big") if number else b""
    return b"\x00" * zeros + body


def _checksum(payload: bytes) -> bytes:
    return hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]


def tron_address(account: bytes) -> str:
    """Base58check of 0x41 + the 20-byte account + the first 4 bytes of a double SHA-256."""
    if len(account) != ACCOUNT_BYTES:
        raise ValueError("a Tron account is 20 bytes")
    payload = TRON_PREFIX + account
    return _base58_encode(payload + _checksum(payload))


def is_tron_address(text: str) -> bool:
    if len(text) != 34 or not text.startswith("T"):
        return False
    raw = _base58_decode(text)
    if raw is None or len(raw) != 1 + ACCOUNT_BYTES + 4:
        return False
    payload, checksum = raw[:-4], raw[-4:]
    return payload[:1] == TRON_PREFIX and _checksum(payload) == checksum


def is_valid(chain: Chain, text: str) -> bool:
    """Whether `text` is an address of `chain`, checksum included."""
    if chain is Chain.TRON:
        return is_tron_address(text)
    return is_evm_address(text)


def encode(chain: Chain, account: bytes) -> str:
    """The canonical spelling of a 20-byte account on `chain`."""
    return tron_address(account) if chain is Chain.TRON else eip55(account)


def canonical(chain: Chain, text: str) -> str:
    """The one spelling an address is stored and compared in (EVM: checksummed; Tron is case
    sensitive and kept as is). `text` must be valid for `chain`."""
    if chain is Chain.TRON:
        return text
    return eip55(bytes.fromhex(text[2:]))
