"""A partner-hosted user's balances, read from the partner over HTTP."""

from __future__ import annotations

from typing import Any

import httpx

from tests.cards.funding.steps import active_card
from tests.factories import user_payload
from tests.local_server import free_port
from tests.partner_hosted.steps import authorize, configure, partner_hosted, webhook_secret


async def created_user(api: httpx.AsyncClient) -> dict[str, Any]:
    response = await api.post("/api/v2/users", json=user_payload())
    assert response.status_code == 201, response.text
    return dict(response.json())


async def balances(api: httpx.AsyncClient, user_id: int) -> httpx.Response:
    return await api.get(f"/api/v2/users/{user_id}/partner-balances")


async def test_the_balances_are_the_partners(api: httpx.AsyncClient) -> None:
    card = await active_card(api, master=0)
    async with partner_hosted(api) as _:
        await authorize(api, card, 25)
        response = await balances(api, card["UserId"])
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["Source"] == "PARTNER"
    assert body["Balances"] == [{"Currency": "USD", "Available": 975, "Ledger": 1000}]


async def test_a_company_whose_balances_are_its_own_is_409(api: httpx.AsyncClient) -> None:
    user = await created_user(api)
    response = await balances(api, user["Id"])
    assert response.status_code == 409
    assert response.json()["Code"] == "PARTNER_HOSTED_NOT_CONFIGURED"


async def test_a_partner_that_cannot_be_reached_is_503(api: httpx.AsyncClient) -> None:
    user = await created_user(api)
    await webhook_secret(api)
    assert (await configure(api, f"http://localhost:{free_port()}")).status_code == 200
    response = await balances(api, user["Id"])
    assert response.status_code == 503
    assert response.json()["Code"] == "PARTNER_UNAVAILABLE"


async def test_a_partner_refusing_the_key_is_503(api: httpx.AsyncClient) -> None:
    user = await created_user(api)
    async with partner_hosted(api) as (partner, _):
        partner.api_key = "another"
        response = await balances(api, user["Id"])
    assert response.status_code == 503
