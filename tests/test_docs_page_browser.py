"""The interactive docs in a real browser (`tests.browser`) that can reach nothing but loopback:
the page loads its script and styles from the service itself and lists every operation of the
document."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

from playwright.async_api import Page, Route

from tests.browser import chromium
from tests.isolated import isolated
from tests.local_server import LocalServer

LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
RENDER_TIMEOUT_MS = 30_000  # a loaded machine parses the 1.5 MB bundle slowly


@asynccontextmanager
async def offline_page() -> AsyncIterator[tuple[Page, list[str], list[str]]]:
    """A page whose requests to anything but loopback are refused; yields the page, the
    addresses it tried to reach elsewhere and its script errors."""
    async with chromium() as browser:
        page = await browser.new_page()
        elsewhere: list[str] = []
        errors: list[str] = []

        async def loopback_only(route: Route) -> None:
            if urlsplit(route.request.url).hostname in LOOPBACK:
                await route.continue_()
            else:
                elsewhere.append(route.request.url)
                await route.abort("internetdisconnected")

        await page.route("**/*", loopback_only)
        page.on("pageerror", lambda e: errors.append(str(e)))
        yield page, elsewhere, errors


def _operations(document: dict) -> int:  # type: ignore[type-arg]
    methods = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
    return sum(len(methods & item.keys()) for item in document["paths"].values())


async def test_swagger_ui_lists_every_operation_with_only_loopback_reachable() -> None:
    async with (
        isolated("docs_browser") as env,
        LocalServer(env.app) as server,
        offline_page() as (page, elsewhere, errors),
    ):
        expected = _operations((await env.client.get("/openapi.json")).json())
        await page.goto(f"{server.base_url}/docs")
        operations = page.locator(".opblock")
        await operations.first.wait_for(timeout=RENDER_TIMEOUT_MS)
        assert await operations.count() == expected
        users = page.locator(".opblock-summary-path", has_text="/api/v2/users/{userId}")
        assert await users.first.is_visible()
    assert elsewhere == []
    assert errors == []
