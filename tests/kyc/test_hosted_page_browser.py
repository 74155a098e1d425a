"""The hosted verification page in a real browser: Debian's Chromium, driven by Playwright,
against the app served on loopback with its background jobs running. The applicant opens the
KYC link, fills in the form and submits; the sandbox provider's callback, delivered by the
background job, approves the user and the card provider account is opened (the browser:
`tests.browser`)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from tests.browser import chromium
from tests.isolated import isolated
from tests.local_server import LocalServer
from tests.onboarding import create_user, provider_status, start_kyc

OUTCOME_DEADLINE_SECONDS = 10.0
POLL_SECONDS = 0.2


async def approved_with_card_account(client: httpx.AsyncClient, user_id: int) -> dict[str, Any]:
    """Poll (bounded) until the user is APPROVED and the card provider account is open."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + OUTCOME_DEADLINE_SECONDS
    report: dict[str, Any] = {}
    while loop.time() < deadline:
        user = (await client.get(f"/api/v2/users/{user_id}")).json()
        if user["KycStatus"] == "APPROVED":
            report = (await client.get(f"/api/v2/users/{user_id}/kyc/detailed-status")).json()
            cardprov = provider_status(report, "cardprov")
            if cardprov["Status"] == "APPROVED" and cardprov["HasAccount"]:
                return report
        await asyncio.sleep(POLL_SECONDS)
    raise AssertionError(f"not approved and provisioned in time: {report}")


async def test_applicant_completes_the_hosted_page_in_chromium_and_is_approved() -> None:
    async with (
        isolated("hosted_browser") as env,
        env.app.router.lifespan_context(env.app),  # the background jobs, as `finplat serve`
        LocalServer(env.app) as server,
        httpx.AsyncClient(
            base_url=server.base_url, headers={"x-api-key": env.api_key}, timeout=30
        ) as client,
    ):
        user = await create_user(client)
        session = await start_kyc(client, user["Id"])
        assert session["Url"].startswith(f"{server.base_url}/sandbox/identity/verify#token=")

        async with chromium() as browser:
            page = await browser.new_page()
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))

            await page.goto(session["Url"])
            # The script took the token from the fragment and removed it from the address bar.
            assert page.url == f"{server.base_url}/sandbox/identity/verify"
            assert await page.locator("#token").input_value() == session["AccessToken"]

            await page.get_by_label("Document type").select_option("ID_CARD")
            await page.get_by_label("Document number").fill("X1234567")
            await page.get_by_label("Approve").check()
            await page.get_by_role("button", name="Submit documents").click()
            await page.wait_for_load_state()

            heading = page.get_by_role("heading", name="Documents submitted")
            assert await heading.is_visible()
            assert "the result will follow" in await page.locator("main").inner_text()
            assert errors == []  # no script error, nothing blocked by the page's CSP

        report = await approved_with_card_account(client, user["Id"])
        assert report["KycStatus"] == "APPROVED"
        assert report["Method"] == "HOSTED_LINK"
