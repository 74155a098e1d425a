"""Sealing and opening stored secrets, and the keys that do it."""

from __future__ import annotations

import pytest

from finplat.config import MissingSecretKey, Settings
from finplat.sealing.keyring import (
    InvalidSecretKey,
    SecretKeyring,
    UnreadableSecret,
    new_key,
)
from tests.sensitive_data import SCANNER

SECRET = "whsec_" + "Q" * 43 + "="
PURPOSE = "companies.webhook_secret"


def keyring(current: str, previous: str = "") -> SecretKeyring:
    return SecretKeyring.from_config(current, previous)


def watched_key() -> str:
    return SCANNER.watch_key(new_key())


def test_a_sealed_secret_opens_to_itself_and_does_not_contain_it() -> None:
    ring = keyring(watched_key())
    sealed = ring.seal(SECRET, purpose=PURPOSE)
    assert SECRET not in sealed
    assert sealed.startswith(ring.current_prefix)
    assert ring.open(sealed, purpose=PURPOSE) == SECRET


def test_each_sealing_of_one_secret_differs() -> None:
    ring = keyring(watched_key())
    assert ring.seal(SECRET, purpose=PURPOSE) != ring.seal(SECRET, purpose=PURPOSE)


def test_a_value_sealed_for_one_column_does_not_open_for_another() -> None:
    ring = keyring(watched_key())
    sealed = ring.seal(SECRET, purpose=PURPOSE)
    with pytest.raises(UnreadableSecret):
        ring.open(sealed, purpose="providers.other_secret")


def test_a_changed_sealed_value_does_not_open() -> None:
    ring = keyring(watched_key())
    sealed = ring.seal(SECRET, purpose=PURPOSE)
    flipped = sealed[:-3] + ("A" if sealed[-3] != "A" else "B") + sealed[-2:]
    with pytest.raises(UnreadableSecret):
        ring.open(flipped, purpose=PURPOSE)


def test_after_a_rotation_the_previous_key_opens_and_the_new_key_seals() -> None:
    old, new = watched_key(), watched_key()
    sealed_before = keyring(old).seal(SECRET, purpose=PURPOSE)
    rotated = keyring(new, previous=old)
    assert rotated.open(sealed_before, purpose=PURPOSE) == SECRET
    assert rotated.seal(SECRET, purpose=PURPOSE).startswith(keyring(new).current_prefix)
    assert rotated.current_prefix != keyring(old).current_prefix


def test_a_value_sealed_with_a_key_no_longer_configured_names_the_setting() -> None:
    sealed = keyring(watched_key()).seal(SECRET, purpose=PURPOSE)
    with pytest.raises(UnreadableSecret, match="FINPLAT_SECRET_KEY_PREVIOUS"):
        keyring(watched_key()).open(sealed, purpose=PURPOSE)


def test_a_plaintext_value_is_not_taken_as_sealed() -> None:
    with pytest.raises(UnreadableSecret, match="not sealed"):
        keyring(watched_key()).open(SECRET, purpose=PURPOSE)


@pytest.mark.parametrize("key", ["not base64!", "c2hvcnQ=", "QUFBQQ==" * 8])
def test_a_key_that_is_not_32_bytes_of_base64_is_refused(key: str) -> None:
    with pytest.raises(InvalidSecretKey):
        keyring(key)


def test_keys_are_taken_in_either_base64_alphabet() -> None:
    key = watched_key()
    standard = key.replace("-", "+").replace("_", "/")
    sealed = keyring(key).seal(SECRET, purpose=PURPOSE)
    assert keyring(standard).open(sealed, purpose=PURPOSE) == SECRET


def test_outside_the_sandbox_a_missing_key_stops_the_start_without_quoting_the_settings() -> None:
    with pytest.raises(MissingSecretKey) as refused:
        Settings(sandbox=False, provider_callback_secret="do-not-print-this-callback-secret")
    assert "do-not-print-this" not in str(refused.value)
    assert "FINPLAT_SECRET_KEY" in str(refused.value)


def test_a_malformed_key_stops_the_start_without_quoting_it() -> None:
    with pytest.raises(InvalidSecretKey) as refused:
        Settings(secret_key="tooshort-but-secret")
    assert "tooshort" not in str(refused.value)


def test_the_sandbox_has_a_development_key_when_none_is_configured() -> None:
    assert Settings(sandbox=True).secret_keyring().seal(SECRET, purpose=PURPOSE)


def test_the_keys_do_not_show_in_the_settings_repr() -> None:
    key = watched_key()
    settings = Settings(secret_key=key, secret_key_previous=new_key())
    assert key not in repr(settings)
