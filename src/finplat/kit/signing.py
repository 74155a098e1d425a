"""Webhook signatures.

* `X-Service-Signature`: lowercase hex HMAC-SHA256 of the exact raw body, keyed by the webhook
  secret (the whole `whsec_...` string, as UTF-8), as the spec defines it.
* Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`): `v1,` + base64
  HMAC-SHA256 of `{id}.{timestamp}.{body}`, keyed by the base64-decoded part of the secret after
  `whsec_`; receivers get replay protection from the signed timestamp.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

SECRET_PREFIX = "whsec_"  # noqa: S105 - a prefix, not a secret


def service_signature(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def standard_signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def verify_service_signature(secret: str, body: bytes, signature: str) -> bool:
    return hmac.compare_digest(service_signature(secret, body), signature)


def verify_standard_signature(
    secret: str, message_id: str, timestamp: int, body: bytes, header: str
) -> bool:
    expected = standard_signature(secret, message_id, timestamp, body)
    return any(hmac.compare_digest(expected, candidate) for candidate in header.split(" "))
