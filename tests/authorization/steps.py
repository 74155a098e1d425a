"""Steps of authorization rules over HTTP."""

from __future__ import annotations

from typing import Any

import httpx


async def bin_range_id(api: httpx.AsyncClient, provider_bin: str = "424242") -> int:
    response = await api.get("/api/v2/authorization/bin-ranges")
    assert response.status_code == 200, response.text
    return int(
        next(r["BinRangeId"] for r in response.json()["BinRanges"] if r["Bin"] == provider_bin)
    )


async def create_rule(api: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    response = await api.post("/api/v2/authorization/rules", json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def max_amount_rule(
    api: httpx.AsyncClient, card: dict[str, Any], max_amount: float, **body: Any
) -> dict[str, Any]:
    """A CARD rule declining the card's purchases above `max_amount` USD."""
    return await create_rule(
        api,
        ScopeType="CARD",
        CardId=card["Id"],
        RuleType="MAX_AMOUNT",
        Configuration={"MaxAmount": max_amount, "Currency": "USD"},
        **body,
    )
