"""Steps of the payments flows over HTTP."""

from __future__ import annotations

from typing import Any

import httpx

from tests.banking.steps import banking_user, default_budget


async def receiver(api: httpx.AsyncClient) -> tuple[dict[str, Any], dict[str, Any]]:
    """A banking user and their default budget."""
    user = await banking_user(api)
    return user, await default_budget(api, user["Id"])


async def create_request(
    api: httpx.AsyncClient, user_id: int, *, headers: dict[str, str] | None = None, **body: Any
) -> httpx.Response:
    payload = {"Amount": "49.90", "Currency": "EUR", "Description": "Dinner"} | body
    return await api.post(
        "/api/v2/payments/requests", params={"userId": user_id}, json=payload, headers=headers
    )


async def requested(api: httpx.AsyncClient, user_id: int, **body: Any) -> dict[str, Any]:
    response = await create_request(api, user_id, **body)
    assert response.status_code == 201, response.text
    return dict(response.json())


async def pay(api: httpx.AsyncClient, request_id: str, **body: Any) -> httpx.Response:
    return await api.post(f"/api/v2/sandbox/payments/requests/{request_id}/pay", json=body)


async def read(api: httpx.AsyncClient, request_id: str) -> httpx.Response:
    return await api.get(f"/api/v2/payments/requests/{request_id}")


async def cancel(api: httpx.AsyncClient, request_id: str) -> httpx.Response:
    return await api.post(f"/api/v2/payments/requests/{request_id}/cancel")


async def events_of(api: httpx.AsyncClient, type_: str) -> list[dict[str, Any]]:
    response = await api.get("/api/v2/events", params={"type": type_})
    assert response.status_code == 200, response.text
    return list(response.json()["Items"])
