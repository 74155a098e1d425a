"""Steps of the payments flows over HTTP."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx

from tests.banking.steps import banking_user, credit, default_budget


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


async def create_mandate(
    api: httpx.AsyncClient, user_id: int, *, headers: dict[str, str] | None = None, **body: Any
) -> httpx.Response:
    payload = {
        "UserId": user_id,
        "MaxAmount": "100.00",
        "Currency": "EUR",
        "Frequency": "MONTHLY",
        "Description": "Gym membership",
        "ExternalReferenceId": "sub-1",
    } | body
    return await api.post("/api/v2/payments/mandates", json=payload, headers=headers)


async def mandate(api: httpx.AsyncClient, user_id: int, **body: Any) -> dict[str, Any]:
    response = await create_mandate(api, user_id, **body)
    assert response.status_code == 201, response.text
    return dict(response.json())


async def authorise(
    api: httpx.AsyncClient, mandate_id: str, outcome: str = "APPROVED"
) -> httpx.Response:
    return await api.post(
        f"/api/v2/sandbox/payments/mandates/{mandate_id}/authorisation", json={"Outcome": outcome}
    )


async def active_mandate(
    api: httpx.AsyncClient, funds: str = "1000.00", **body: Any
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A user whose default budget holds `funds` EUR, and an active mandate on it."""
    user, budget = await receiver(api)
    if funds != "0":
        await credit(api, user["Id"], budget["BudgetId"], funds)
    created = await mandate(api, user["Id"], **body)
    response = await authorise(api, created["Id"])
    assert response.status_code == 200, response.text
    return user, budget, dict(response.json())


async def read_mandate(api: httpx.AsyncClient, mandate_id: str) -> dict[str, Any]:
    response = await api.get(f"/api/v2/payments/mandates/{mandate_id}")
    assert response.status_code == 200, response.text
    return dict(response.json())


async def collect(
    api: httpx.AsyncClient,
    mandate_id: str,
    amount: Any = "10.00",
    reference: str = "ref-1",
    **body: Any,
) -> httpx.Response:
    payload = {
        "MandateId": mandate_id,
        "Amount": amount,
        "Currency": "EUR",
        "merchantReferenceId": reference,
    } | body
    return await api.post("/api/v2/payments/collections", json=payload)


async def master_posted(api: httpx.AsyncClient, currency: str = "EUR") -> Decimal:
    """The company master account's posted balance in `currency` (0 before any)."""
    response = await api.get("/api/v2/company/balances")
    assert response.status_code == 200, response.text
    found = [b for b in response.json()["Balances"] if b["Currency"] == currency]
    return Decimal(str(found[0]["Posted"])) if found else Decimal(0)
