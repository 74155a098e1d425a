"""The scanner itself: each detector, and a deliberately leaky route it must catch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import structlog
from fastapi import FastAPI

from finplat.config import SANDBOX_SECRET_KEY
from finplat.http.routing import CurrentPrincipal, api_router
from tests.conftest import Tenant
from tests.scanner_plugin import LOG_DIR_ENV
from tests.sensitive_data import SCANNER, find, luhn_valid

VISA_TEST = "4111111111111111"
ROOT = Path(__file__).resolve().parents[1]


def kinds(text: str) -> set[str]:
    return {f.kind for f in find(text, "unit")}


def test_luhn() -> None:
    assert luhn_valid(VISA_TEST)
    assert luhn_valid("378282246310005")
    assert not luhn_valid("4111111111111112")


def test_card_numbers_are_found_plain_spaced_or_dashed() -> None:
    for text in (
        VISA_TEST,
        "4111 1111 1111 1111",
        "4111-1111-1111-1111",
        '{"pan":"5555555555554444"}',
    ):
        assert "card number" in kinds(text), text


def test_digit_runs_that_are_not_cards_are_not_flagged() -> None:
    assert kinds("4111111111111112") == set()  # fails Luhn
    assert kinds("req_a41111111111111111b") == set()  # inside an identifier
    assert kinds('{"Phone":"+447911123456","At":"2026-11-21T18:02:19.245312Z"}') == set()


def test_cvv_other_than_stars_is_found() -> None:
    assert "CVV" in kinds('{"cvv": "123"}')
    assert "CVV" in kinds('{"Cvv":987}')
    assert kinds('{"cvv": "***"}') == set()


def test_ssn_pin_and_api_key_are_found() -> None:
    assert "SSN" in kinds("ssn 123-45-6789")
    assert "SSN" in kinds('{"Ssn": "123456789"}')
    assert "PIN" in kinds('{"Pin": "482913"}')
    assert "API key" in kinds("fp_test_" + "a1B2" * 10 + "xyz")
    assert "API key" in kinds("fp_op_" + "a1B2" * 10 + "xyz")


def test_a_secret_key_is_found_in_either_base64_alphabet_with_or_without_padding() -> None:
    key = "ab-_" + "Q" * 39 + "="
    for text in (key, key.replace("-", "+").replace("_", "/"), f"key={key[:-1]}."):
        assert {f.kind for f in find(text, "unit", secret_keys={key})} == {"secret key"}, text
    assert "secret key" in kinds(f"FINPLAT_SECRET_KEY={SANDBOX_SECRET_KEY}")


def test_webhook_secret_is_allowed_only_in_its_rotation_response() -> None:
    secret = "whsec_" + "A" * 43 + "="
    announced: set[str] = set()
    body = f'{{"WebhookSecret":"{secret}"}}'
    assert find(body, "rotation", rotation_response=True, announced=announced) == []
    assert [f.kind for f in find(body, "again", rotation_response=True, announced=announced)] == [
        "webhook secret"
    ]
    assert [f.kind for f in find(f"log {secret}", "log", announced=announced)] == ["webhook secret"]


def test_a_child_companys_key_and_secret_are_allowed_only_once_in_its_creation() -> None:
    key, secret = "fp_test_" + "K" * 43, "whsec_" + "B" * 43 + "="
    announced: set[str] = set()
    body = f'{{"Id":7,"ApiKey":"{key}","WebhookSecret":"{secret}"}}'
    assert find(body, "created", provisioning_response=True, announced=announced) == []
    again = find(body, "again", provisioning_response=True, announced=announced)
    assert sorted(f.kind for f in again) == ["API key", "webhook secret"]
    assert [f.kind for f in find(f"log {key}", "log", announced=announced)] == ["API key"]


def test_digits_inside_a_uuid_are_not_a_card_number() -> None:
    # 4007205974034118 passes Luhn: as a UUID's first groups it is an identifier.
    assert find('{"GroupId":"40072059-7403-4118-b93e-ee8f5b0760fe"}', "ids") == []
    assert [f.kind for f in find("card 4007-2059-7403-4118 charged", "log")] == ["card number"]


def test_a_voucher_code_is_allowed_only_once_in_its_issuing_response() -> None:
    code = "VCH-7KQ2-AB3D-9XYZ-0000-MNPQ"
    announced: set[str] = set()
    body = f'{{"PlaintextCode":"{code}"}}'
    assert find(body, "issue", issuing_response=True, announced=announced) == []
    assert [f.kind for f in find(body, "again", issuing_response=True, announced=announced)] == [
        "voucher code"
    ]
    assert [f.kind for f in find(f"log {code}", "log", announced=announced)] == ["voucher code"]
    compact = code.replace("-", "")
    assert [f.kind for f in find(f"error {compact}", "error", announced=announced)] == [
        "voucher code"
    ]
    assert find('{"MaskedCode":"VCH-****-****-****-****-MNPQ"}', "list") == []


def test_a_one_time_code_is_allowed_only_in_the_sandbox_inbox() -> None:
    body = '{"RedemptionId":"r","Code":"482913"}'
    assert find(body, "inbox", inbox_response=True) == []
    assert [f.kind for f in find(body, "verify")] == ["one-time code"]
    assert find('{"Code":"VOUCHER_NOT_FOUND"}', "error") == []


def test_the_inboxes_are_the_voucher_and_the_crypto_withdrawal_code_reveals() -> None:
    from tests.scanner_plugin import INBOX_PATH

    assert INBOX_PATH.fullmatch("/api/v2/sandbox/vouchers/redemptions/r-1/code")
    assert INBOX_PATH.fullmatch("/api/v2/sandbox/crypto/wallet-withdrawals/ctr_1/code")
    assert not INBOX_PATH.fullmatch("/api/v2/crypto-virtual-accounts/bankprov-to-wallet/confirm")
    assert not INBOX_PATH.fullmatch("/api/v2/crypto-virtual-accounts/transfers/ctr_1")


def test_a_mor_bearer_token_is_allowed_only_once_in_the_sign_in_response() -> None:
    token = "mor_at_" + "A" * 40 + "b-_"
    body = f'{{"AccessToken":"{token}","ExpiresAt":"2026-11-27T02:00:00Z"}}'
    announced: set[str] = set()
    assert find(body, "sign-in", token_response=True, announced=announced) == []
    again = find(body, "again", token_response=True, announced=announced)
    assert [f.kind for f in again] == ["bearer token"]
    assert [f.kind for f in find(f"revoked {token}", "log")] == ["bearer token"]


def test_a_password_value_or_its_argon2_hash_is_found_anywhere() -> None:
    assert kinds('{"Password":"correct-horse-battery-9"}') == {"password"}
    assert kinds('{"NewPassword": "x"}') == {"password"}
    assert kinds("stored $argon2id$v=19$m=8,t=1,p=1$c2FsdA$aGFzaA") == {"password hash"}
    # The OpenAPI document describes the field; that is no password.
    assert kinds('{"Password":{"type":"string","minLength":12}}') == set()


@pytest.mark.leaks_on_purpose
async def test_a_leaking_endpoint_is_caught_in_its_response_and_its_logs(
    app: FastAPI, tenant: Tenant, capsys: pytest.CaptureFixture[str]
) -> None:
    router = api_router()
    api_key = tenant.api_key

    @router.get("/test/leaky")
    async def leaky(principal: CurrentPrincipal) -> dict[str, str]:
        structlog.get_logger("leaky").info("charging", card=VISA_TEST)
        return {
            "cardNo": VISA_TEST,
            "cvv": "123",
            "Ssn": "123-45-6789",
            "Pin": "482913",
            "Key": api_key,
            "Secret": tenant.webhook_secret,
            "SealingKey": SANDBOX_SECRET_KEY,
        }

    app.include_router(router)
    with SCANNER.expecting_leaks() as leaks:
        await tenant.client.get("/test/leaky")
    found = {f.kind for f in leaks}
    assert found == {
        "card number",
        "CVV",
        "SSN",
        "PIN",
        "API key",
        "webhook secret",
        "secret key",
    }
    with SCANNER.expecting_leaks() as log_leaks:
        SCANNER.check(capsys.readouterr().out, "captured logs")
    assert [f.kind for f in log_leaks] == ["card number"]


def test_a_leak_anywhere_fails_the_whole_session(tmp_path: Path) -> None:
    leaking = tmp_path / "test_leaks.py"
    leaking.write_text(
        f"def test_prints_a_card_number():\n    print('charging card {VISA_TEST}')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.scanner_plugin", str(leaking)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1, result.stdout
    assert "1 passed" in result.stdout  # the test itself passed: the scanner failed the run
    assert "card number in Captured stdout" in result.stdout


def test_a_leak_in_a_pytest_xdist_workers_traffic_fails_the_whole_session(
    tmp_path: Path,
) -> None:
    """`make test` runs on several workers: what a worker's HTTP traffic leaked is judged by
    the controller, whose exit status is the run's."""
    leaking = tmp_path / "test_leaks_in_a_worker.py"
    leaking.write_text(
        "from tests.sensitive_data import SCANNER\n\n"
        "def test_answers_a_card_number():\n"
        f"    SCANNER.check(b'charging card {VISA_TEST}', 'response to GET /leak')\n"
    )
    # Its own folder: the workers' hand-over must not reach this session's verdict.
    logs = tmp_path / "logs"
    logs.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), LOG_DIR_ENV: str(logs)}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-n",
            "2",
            "-p",
            "tests.scanner_plugin",
            str(leaking),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1, result.stdout
    assert "1 passed" in result.stdout
    assert "card number in response to GET /leak" in result.stdout
