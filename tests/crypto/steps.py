"""Steps of the crypto flows over HTTP, shared by the crypto test modules."""

from __future__ import annotations

from typing import Any

import httpx

PAIRS = [(c, n) for c in ("USDC", "USDT") for n in (1, -200, 137, 42161)]


async def payin_address(
    api: httpx.AsyncClient, user_id: int, currency: str = "USDC", chain_id: int = 1
) -> dict[str, Any]:
    response = await api.post(
        "/api/v2/crypto-virtual-accounts/payin-address",
        params={"userId": user_id},
        json={"crypto_currency": currency, "chain_id": chain_id},
    )
    assert response.status_code == 200, response.text
    return dict(response.json())
