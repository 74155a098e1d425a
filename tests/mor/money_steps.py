"""Steps of the MOR merchant's money over HTTP."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI

from finplat.mor.access import PREFIX
from tests.conftest import Tenant


async def fund(client: httpx.AsyncClient, amount: float | str, currency: str = "USD") -> None:
    response = await client.post(
        "/api/v2/sandbox/company/funding", json={"Currency": currency, "Amount": amount}
    )
    assert response.status_code == 200, response.text


async def wallet(client: httpx.AsyncClient, currency: str = "USD") -> dict[str, Any]:
    response = await client.get(f"{PREFIX}/wallets/{currency}")
    assert response.status_code == 200, response.text
    return dict(response.json())


async def available(client: httpx.AsyncClient, currency: str = "USD") -> Decimal:
    return Decimal(str((await wallet(client, currency))["Available"]))


async def create_child(
    parent: Tenant, name: str = "Child Ltd", key: str | None = None
) -> dict[str, Any]:
    headers = {"Idempotency-Key": key} if key else {}
    response = await parent.client.post(f"{PREFIX}/children", json={"Name": name}, headers=headers)
    assert response.status_code == 201, response.text
    return dict(response.json())


def client_for(app: FastAPI, api_key: str) -> httpx.AsyncClient:
    """A client with another company's key (a child's first key); the caller closes it."""
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url="http://finplat.test",
        headers={"x-api-key": api_key},
    )


async def fund_child(
    parent: Tenant,
    child_id: int,
    amount: float | str,
    currency: str = "USD",
    key: str | None = None,
) -> httpx.Response:
    headers = {"Idempotency-Key": key} if key else {}
    return await parent.client.post(
        f"{PREFIX}/children/{child_id}/fundings",
        json={"Amount": amount, "Currency": currency},
        headers=headers,
    )
