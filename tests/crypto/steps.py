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


async def send(
    api: httpx.AsyncClient,
    address: str,
    amount: str | int = "100",
    currency: str = "USDC",
    chain_id: int = 1,
    confirmations: int = 0,
) -> dict[str, Any]:
    """A transfer reaches a pay-in address on chain (sandbox); returns the platform's deposit."""
    response = await api.post(
        "/api/v2/sandbox/crypto/deposits",
        json={
            "Address": address,
            "Currency": currency,
            "ChainId": chain_id,
            "Amount": str(amount),
            "Confirmations": confirmations,
        },
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


async def add_blocks(
    api: httpx.AsyncClient, user_id: int, deposit_id: str, blocks: int
) -> dict[str, Any]:
    response = await api.post(
        f"/api/v2/sandbox/crypto/deposits/{deposit_id}/confirmations",
        params={"userId": user_id},
        json={"Blocks": blocks},
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def reorg(api: httpx.AsyncClient, user_id: int, deposit_id: str) -> dict[str, Any]:
    response = await api.post(
        f"/api/v2/sandbox/crypto/deposits/{deposit_id}/reorg", params={"userId": user_id}
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def crypto_balance(api: httpx.AsyncClient, user_id: int, currency: str = "USDC") -> Any:
    response = await api.get("/api/v2/crypto-virtual-accounts/balances", params={"userId": user_id})
    assert response.status_code == 200, response.text
    return next(b for b in response.json()["Balances"] if b["CryptoCurrency"] == currency)


async def credited_user(
    api: httpx.AsyncClient, amount: str = "100", currency: str = "USDC", chain_id: int = 1
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A verified user whose crypto balance holds `amount` from one final deposit."""
    from tests.onboarding import approved_user

    user = await approved_user(api)
    address = await payin_address(api, user["Id"], currency, chain_id)
    deposit = await send(api, address["Address"], amount, currency, chain_id, confirmations=500)
    assert deposit["Status"] == "CREDITED", deposit
    return user, deposit
