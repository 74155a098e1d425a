"""The whole-API benchmark (`bench/api.py`) measures every operation without a failure and
leaves a ledger that verifies: one second per operation, two clients, no timing asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.databases import backend, server_url

ROOT = Path(__file__).resolve().parents[2]
OPERATIONS = [
    "get_user",
    "list_cards",
    "get_balance",
    "create_user",
    "order_card",
    "topup",
    "unload",
    "company_funding",
    "budget_transfer",
    "payout_create",
    "fx_trade",
    "payment_request",
    "collection",
    "voucher_redemption",
    "crypto_deposit",
    "crypto_card_load",
    "card_authorization",
    "card_decision",
    "topup_lane_off",
]
NUMBERS = ("ops_per_s", "p50_ms", "p99_ms", "server_cpu_us_per_op")
RUN_TIMEOUT_SECONDS = 300


def run_bench(*database: str) -> tuple[list[dict[str, Any]], str]:
    """Every operation, in reverse order on the command line: (the JSON lines, stderr)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "api.py"), "--seconds", "1", "--clients", "2",
         "--ops", ",".join(reversed(OPERATIONS)), *database],
        cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT_SECONDS, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return lines, done.stderr


def assert_measured_without_failures(lines: list[dict[str, Any]], database: str) -> None:
    assert [line["op"] for line in lines] == OPERATIONS  # measured in their own order
    for line in lines:
        assert line["errors"] == 0, line
        assert line["error_kinds"] == {}
        assert line["ok"] > 0, line
        assert line["database"] == database
        assert all(isinstance(line[name], int | float) for name in NUMBERS), line
        assert 0 < line["p50_ms"] <= line["p99_ms"]
        assert isinstance(line["generator_bound"], bool)
    assert next(line for line in lines if line["op"] == "payout_create")["requests_per_op"] == 4


@pytest.mark.skipif(backend() != "postgresql", reason="the PostgreSQL run needs a server")
def test_every_operation_is_measured_on_postgresql_and_the_ledger_verifies() -> None:
    url = server_url()
    assert url is not None
    lines, stderr = run_bench("--postgres", url)
    assert_measured_without_failures(lines, "postgresql")
    assert all(isinstance(line["db_cpu_us_per_op"], int) for line in lines), lines
    assert "ledger OK" in stderr


@pytest.mark.long
def test_every_operation_is_measured_on_sqlite_and_the_ledger_verifies() -> None:
    lines, stderr = run_bench("--sqlite")
    assert_measured_without_failures(lines, "sqlite")
    # The database works inside the server's process: its CPU is the server's.
    assert all(line["db_cpu_us_per_op"] is None for line in lines)
    assert "ledger OK" in stderr
