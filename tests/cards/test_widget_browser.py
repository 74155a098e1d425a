"""The secure card widget in a real browser (Debian's Chromium, driven by Playwright), against
the app served on loopback: the page shows the full number and CVV once; a second use of the
same URL, and a use after expiry, are refused. The browser's traffic is not the test's: the
full card details only ever reach the page."""

from __future__ import annotations

from datetime import timedelta

import httpx

from finplat.kit.clock import set_clock, utcnow
from finplat.providers.cards.sandbox.adapter import luhn_check_digit
from tests.browser import chromium
from tests.cards.steps import approved_card_user, ordered_card
from tests.isolated import isolated
from tests.local_server import LocalServer


def _luhn_ok(number: str) -> bool:
    return luhn_check_digit(number[:-1]) == number[-1]


async def _widget_url(client: httpx.AsyncClient, card: dict[str, object]) -> str:
    response = await client.get(
        f"/api/v2/cards/{card['Id']}/widget", params={"userId": str(card["UserId"])}
    )
    assert response.status_code == 200, response.text
    return str(response.json()["Url"])


async def test_widget_shows_the_card_once_then_refuses_reuse_and_expiry() -> None:
    async with (
        isolated("card_widget_browser") as env,
        LocalServer(env.app) as server,
        httpx.AsyncClient(
            base_url=server.base_url, headers={"x-api-key": env.api_key}, timeout=30
        ) as client,
    ):
        card = await ordered_card(client, await approved_card_user(client))
        url = await _widget_url(client, card)
        assert url.startswith(f"{server.base_url}/sandbox/cards/widget#token=")
        async with chromium() as browser:
            page = await browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            await page.goto(url)
            number = page.locator("#number")
            await number.wait_for(state="visible")
            digits = (await number.inner_text()).replace(" ", "")
            assert len(digits) == 16
            assert digits.startswith("424242")
            assert digits.endswith(str(card["Last4"]))
            assert _luhn_ok(digits)
            cvv = await page.locator("#cvv").inner_text()
            assert len(cvv) == 3
            assert cvv.isdigit()
            # The token left the address bar.
            assert page.url == f"{server.base_url}/sandbox/cards/widget"

            second = await browser.new_page()
            await second.goto(url)
            await second.locator("#refused").wait_for(state="visible")
            assert not await second.locator("#card").is_visible()

            late_url = await _widget_url(client, card)
            later = utcnow() + timedelta(seconds=61)
            set_clock(lambda: later)
            late = await browser.new_page()
            await late.goto(late_url)
            await late.locator("#refused").wait_for(state="visible")
            assert not await late.locator("#card").is_visible()
            assert errors == []
