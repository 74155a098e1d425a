"""Wires the sensitive-data scanner into the whole test session.

Captured: every response body and every webhook body sent through httpx in the test process,
every test's captured output (the structured logs), the log files of server and worker
processes the tests start, and the bodies the loopback webhook receiver gets. Any finding
fails the session at its end.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.sensitive_data import SCANNER

LOG_DIR_ENV = "FINPLAT_TEST_PROCESS_LOGS"
CONFIGURATION_PATH = "/api/v2/company/configuration"
# The one response that shows voucher codes: issuing them into a group.
ISSUING_PATH = re.compile(r"/api/v2/admin/vouchers/groups/[^/]+/vouchers")
# The one response that shows a MOR child company's first API key and webhook secret.
PROVISIONING_PATH = "/api/v2/mor/public/children"
# The responses that show a one-time code: the sandbox's inbox, for a voucher redemption and
# for a crypto wallet withdrawal.
INBOX_PATH = re.compile(
    r"/api/v2/sandbox/(?:vouchers/redemptions|crypto/wallet-withdrawals)/[^/]+/code"
)

# The one response that shows a MOR simple user's bearer token: the sign-in that issued it.
TOKEN_PATH = "/api/v2/mor/public/auth/token"


@pytest.fixture(scope="session", autouse=True)
def _scan_http_traffic() -> Iterator[None]:
    original = httpx.AsyncClient.send

    async def send(
        self: httpx.AsyncClient, request: httpx.Request, **kwargs: Any
    ) -> httpx.Response:
        if "x-service-signature" in request.headers:
            SCANNER.check(request.content, f"webhook body to {request.url}")
        response = await original(self, request, **kwargs)
        if not kwargs.get("stream"):
            rotation = request.method == "PUT" and request.url.path == CONFIGURATION_PATH
            issuing = request.method == "POST" and bool(ISSUING_PATH.fullmatch(request.url.path))
            SCANNER.check(
                response.content,
                f"response to {request.method} {request.url.path}",
                rotation_response=rotation,
                issuing_response=issuing,
                inbox_response=bool(INBOX_PATH.fullmatch(request.url.path)),
                provisioning_response=request.method == "POST"
                and request.url.path == PROVISIONING_PATH,
                token_response=request.method == "POST" and request.url.path == TOKEN_PATH,
            )
        return response

    httpx.AsyncClient.send = send  # type: ignore[method-assign]
    try:
        yield
    finally:
        httpx.AsyncClient.send = original  # type: ignore[method-assign]


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault(LOG_DIR_ENV, tempfile.mkdtemp(prefix="finplat-process-logs-"))


@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # The teardown report carries the output of every phase of the test, once.
    if report.when != "teardown" or "leaks_on_purpose" in report.keywords:
        return
    for name, content in report.sections:
        if name.startswith("Captured"):
            SCANNER.check(content, f"{name} of {report.nodeid}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    folder = Path(os.environ[LOG_DIR_ENV])
    worker = getattr(session.config, "workerinput", None)
    if worker is not None:
        # A pytest-xdist worker: its HTTP traffic was scanned here, so hand what it found
        # to the controller, which judges the whole session once every worker is done.
        (folder / f"scanner-{worker['workerid']}.json").write_text(
            json.dumps({"scanned": SCANNER.scanned, "findings": SCANNER.findings_as_lines()})
        )
        return
    for path in sorted(folder.glob("*.log")):
        SCANNER.check(path.read_bytes(), f"process log {path.name}")
    worker_lines: list[str] = []
    scanned = SCANNER.scanned
    for path in sorted(folder.glob("scanner-*.json")):
        handed = json.loads(path.read_text())
        scanned += handed["scanned"]
        worker_lines += handed["findings"]
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if SCANNER.findings or worker_lines:
        if reporter is not None:
            reporter.write_sep("=", "sensitive data found", red=True)
            for line in (SCANNER.findings_as_lines() + worker_lines)[:50]:
                reporter.write_line(line)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    elif reporter is not None:
        reporter.write_sep("-", f"sensitive-data scanner: {scanned} bodies and logs clean")
