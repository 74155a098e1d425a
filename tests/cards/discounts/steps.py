from __future__ import annotations

from typing import Any

import httpx

CODES = "/api/v2/admin/discount-codes"


async def define(api: httpx.AsyncClient, code: str = "HALF", **body: Any) -> dict[str, Any]:
    response = await api.post(CODES, json={"Code": code, "PercentOff": 50, **body})
    assert response.status_code == 201, response.text
    found: dict[str, Any] = response.json()
    return found


async def put_code(
    api: httpx.AsyncClient, card: dict[str, Any], code: str | None, company_id: int | None = None
) -> httpx.Response:
    query = "" if company_id is None else f"?companyId={company_id}"
    return await api.put(f"{CODES}/cards/{card['Id']}/discount{query}", json={"DiscountCode": code})
