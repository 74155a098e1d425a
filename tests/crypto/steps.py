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


async def crypto_banking_user(
    api: httpx.AsyncClient, amount: str = "100", currency: str = "USDC"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A user with an open bank account and `amount` in the crypto balance; and the default
    budget."""
    from tests.banking.steps import banking_user, default_budget

    user = await banking_user(api)
    address = await payin_address(api, user["Id"], currency, 1)
    deposit = await send(api, address["Address"], amount, currency, 1, confirmations=64)
    assert deposit["Status"] == "CREDITED", deposit
    return user, await default_budget(api, user["Id"])


async def exchange_quote(
    api: httpx.AsyncClient,
    user_id: int,
    budget_id: str,
    amount: str = "100",
    fiat: str = "EUR",
    currency: str = "USDC",
) -> dict[str, Any]:
    response = await api.post(
        "/api/v2/crypto-virtual-accounts/exchange/quote",
        params={"userId": user_id},
        json={
            "CryptoCurrency": currency,
            "Amount": amount,
            "FiatCurrency": fiat,
            "BudgetId": budget_id,
        },
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


async def accept(
    api: httpx.AsyncClient,
    user_id: int,
    quote_id: str,
    key: str | None = None,
    path: str = "exchange/accept",
) -> httpx.Response:
    return await api.post(
        f"/api/v2/crypto-virtual-accounts/{path}",
        params={"userId": user_id},
        json={"QuoteId": quote_id},
        headers={"Idempotency-Key": key} if key else {},
    )


async def settle_conversion(
    api: httpx.AsyncClient, user_id: int, transfer_id: str, outcome: str
) -> dict[str, Any]:
    response = await api.post(
        f"/api/v2/sandbox/crypto/bankprov-deposits/{transfer_id}/settle",
        params={"userId": user_id},
        json={"Outcome": outcome},
    )
    assert response.status_code == 200, response.text
    return dict(response.json())
