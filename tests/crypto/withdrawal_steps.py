"""Steps of wallet withdrawals over HTTP."""

from __future__ import annotations

import secrets
from typing import Any

import httpx

from finplat.providers.crypto import addresses
from finplat.providers.crypto.port import Chain

BASE = "/api/v2/crypto-virtual-accounts/bankprov-to-wallet"
SANDBOX = "/api/v2/sandbox/crypto/wallet-withdrawals"


def external_address(chain_id: int = 1) -> str:
    """A fresh, valid address of the chain, in its canonical spelling."""
    return addresses.encode(Chain(chain_id), secrets.token_bytes(addresses.ACCOUNT_BYTES))


async def initiate(
    api: httpx.AsyncClient,
    user_id: int,
    address: str,
    amount: str | int = "40",
    currency: str = "USDC",
    chain_id: int = 1,
    key: str | None = None,
) -> httpx.Response:
    return await api.post(
        f"{BASE}/initiate",
        params={"userId": user_id},
        json={
            "CryptoCurrency": currency,
            "ChainId": chain_id,
            "Amount": amount,
            "DestinationAddress": address,
        },
        headers={"Idempotency-Key": key} if key else {},
    )


async def initiated(
    api: httpx.AsyncClient, user_id: int, address: str, **kw: Any
) -> dict[str, Any]:
    response = await initiate(api, user_id, address, **kw)
    assert response.status_code == 201, response.text
    return dict(response.json())


async def code_of(api: httpx.AsyncClient, user_id: int, transfer_id: str) -> str:
    response = await api.get(f"{SANDBOX}/{transfer_id}/code", params={"userId": user_id})
    assert response.status_code == 200, response.text
    return str(response.json()["Code"])


async def confirm(
    api: httpx.AsyncClient, user_id: int, transfer_id: str, code: str, key: str | None = None
) -> httpx.Response:
    return await api.post(
        f"{BASE}/confirm",
        params={"userId": user_id},
        json={"TransferId": transfer_id, "Code": code},
        headers={"Idempotency-Key": key} if key else {},
    )


def wrong(code: str) -> str:
    return f"{(int(code) + 1) % 1_000_000:06d}"


async def transfer(api: httpx.AsyncClient, user_id: int, transfer_id: str) -> dict[str, Any]:
    response = await api.get(
        f"/api/v2/crypto-virtual-accounts/transfers/{transfer_id}", params={"userId": user_id}
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def settle(
    api: httpx.AsyncClient, user_id: int, transfer_id: str, outcome: str
) -> dict[str, Any]:
    response = await api.post(
        f"{SANDBOX}/{transfer_id}/settle", params={"userId": user_id}, json={"Outcome": outcome}
    )
    assert response.status_code == 200, response.text
    return dict(response.json())
