"""Steps of the voucher flows over HTTP."""

from __future__ import annotations

from typing import Any

import httpx

GROUPS = "/api/v2/admin/vouchers/groups"


async def group(api: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    response = await api.post(GROUPS, json={"Name": "Winter campaign", **body})
    assert response.status_code == 200, response.text
    return dict(response.json())


async def issue(
    api: httpx.AsyncClient, group_id: str, key: str | None = None, **body: Any
) -> list[dict[str, Any]]:
    headers = {"Idempotency-Key": key} if key else {}
    response = await api.post(f"{GROUPS}/{group_id}/vouchers", json=body, headers=headers)
    assert response.status_code == 201, response.text
    return list(response.json()["Vouchers"])


async def voucher(api: httpx.AsyncClient, **terms: Any) -> dict[str, Any]:
    """One voucher of 25 USD (unless `terms` say otherwise) in a new group."""
    made = await group(api)
    (issued,) = await issue(api, made["Id"], **{"Value": 25, "Currency": "USD", **terms})
    return issued
