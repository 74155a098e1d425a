"""Webhook signatures: the spec's X-Service-Signature and Standard Webhooks."""

from __future__ import annotations

import base64
import hashlib
import hmac

from finplat.auth.api_keys import new_webhook_secret
from finplat.kit.signing import (
    service_signature,
    standard_signature,
    verify_service_signature,
    verify_standard_signature,
)


def test_service_signature_is_lowercase_hex_hmac_sha256_of_the_raw_body() -> None:
    secret, body = "whsec_test", b'{"id":"evt_1"}'
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    assert service_signature(secret, body) == expected
    assert expected == expected.lower()
    assert len(expected) == 64


def test_standard_signature_signs_id_timestamp_and_body_with_the_decoded_secret() -> None:
    secret = new_webhook_secret()
    key = base64.b64decode(secret.removeprefix("whsec_"))
    body = b'{"a":1}'
    digest = hmac.new(key, b"msg_1.1700000000." + body, hashlib.sha256).digest()
    assert (
        standard_signature(secret, "msg_1", 1700000000, body)
        == "v1," + base64.b64encode(digest).decode()
    )


def test_a_changed_byte_fails_verification() -> None:
    secret = new_webhook_secret()
    body = b'{"amount":100}'
    assert verify_service_signature(secret, body, service_signature(secret, body))
    assert not verify_service_signature(secret, b'{"amount":900}', service_signature(secret, body))
    header = standard_signature(secret, "m", 1, body)
    assert verify_standard_signature(secret, "m", 1, body, header)
    assert not verify_standard_signature(secret, "m", 2, body, header)


def test_webhook_secrets_use_the_standard_webhooks_format() -> None:
    secret = new_webhook_secret()
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"))) == 32
