"""Steps of the banking flows over HTTP, shared by every banking test module."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx

from tests.bankprov_onboarding.steps import onboarded_user
from tests.onboarding import decide

SCHEME_OF = {"EUR": "SEPA", "GBP": "FPS", "USD": "SWIFT", "USDC": "CRYPTO", "USDT": "CRYPTO"}


async def banking_user(api: httpx.AsyncClient) -> dict[str, Any]:
    """A personal user whose banking-provider account is open (onboarded and approved)."""
    user = await onboarded_user(api)
    await decide(api, user["Id"], "APPROVED", provider="bankprov")
    return user


async def budgets(api: httpx.AsyncClient, user_id: int) -> list[dict[str, Any]]:
    response = await api.get(f"/api/v2/banking/users/{user_id}/budgets")
    assert response.status_code == 200, response.text
    return list(response.json()["Budgets"])


async def default_budget(api: httpx.AsyncClient, user_id: int) -> dict[str, Any]:
    return next(b for b in await budgets(api, user_id) if b["IsDefault"])


async def create_budget(
    api: httpx.AsyncClient, user: dict[str, Any], name: str = "Savings", **body: Any
) -> dict[str, Any]:
    response = await api.post(
        f"/api/v2/banking/users/{user['Id']}/budgets",
        json={"AccountId": user["AccountId"], "Name": name, **body},
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


async def credit(
    api: httpx.AsyncClient,
    user_id: int,
    budget_id: str,
    amount: str | int,
    currency: str = "EUR",
    scheme: str | None = None,
) -> dict[str, Any]:
    """Money arrives in the budget from outside (sandbox); returns the transaction."""
    response = await api.post(
        f"/api/v2/sandbox/banking/budgets/{budget_id}/credits",
        params={"userId": user_id},
        json={
            "Currency": currency,
            "Amount": float(Decimal(str(amount))),
            "Scheme": scheme or SCHEME_OF[currency],
            "SenderName": "Ada Lovelace",
        },
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


async def funded_user(
    api: httpx.AsyncClient, amount: str | int = "1000.00", currency: str = "EUR"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A banking user whose default budget holds `amount` of `currency`."""
    user = await banking_user(api)
    budget = await default_budget(api, user["Id"])
    await credit(api, user["Id"], budget["BudgetId"], amount, currency)
    return user, budget


def balance_of(budget: dict[str, Any], currency: str) -> dict[str, Any]:
    return next(b for b in budget["Balances"] if b["Currency"] == currency)


async def available(api: httpx.AsyncClient, user_id: int, budget_id: str, currency: str) -> Decimal:
    found = next(b for b in await budgets(api, user_id) if b["BudgetId"] == budget_id)
    return Decimal(str(balance_of(found, currency)["Available"]))
