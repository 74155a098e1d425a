"""Debian's Chromium, driven by Playwright, for the tests that need a real browser.

`make test` and `.ci/run` install the browser (`.ci/install-chromium`). Where it is still
missing, a developer's run skips the browser tests with the command that installs it, while
a CI run (`CI=true`) fails them: CI must not pass without running the browser.
`FINPLAT_TEST_CHROMIUM` names another executable (a path that does not exist simulates a
machine without the browser)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright

CHROMIUM_ENV = "FINPLAT_TEST_CHROMIUM"
DEFAULT_CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
INSTALL_HINT = "sudo apt-get install chromium"


def chromium_path() -> str:
    """The browser's executable; skips the test where it is missing, unless on CI."""
    path = Path(os.environ.get(CHROMIUM_ENV) or DEFAULT_CHROMIUM)
    if path.is_file() and os.access(path, os.X_OK):
        return str(path)
    reason = f"{path} is missing: install it with `{INSTALL_HINT}`"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI must run the browser tests)")
    pytest.skip(reason)


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    executable = chromium_path()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            await browser.close()
