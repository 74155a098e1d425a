"""Payout steps over HTTP: terms, check, initiate, verify, create, and the sandbox's moves."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx

from tests.banking.payees.steps import verified_payee
from tests.banking.steps import balance_of, budgets, funded_user

PAYOUTS = "/api/v2/banking/payouts"


def terms(
    user: dict[str, Any],
    budget: dict[str, Any],
    payee: dict[str, Any],
    amount: float = 100,
    currency: str = "EUR",
    **extra: Any,
) -> dict[str, Any]:
    return {
        "AccountId": user["AccountId"],
        "BudgetId": budget["BudgetId"],
        "PayeeId": payee["PayeeId"],
        "Amount": amount,
        "Currency": currency,
        **extra,
    }


async def check(
    api: httpx.AsyncClient, user: dict[str, Any], body: dict[str, Any]
) -> httpx.Response:
    return await api.post(f"{PAYOUTS}/check", params={"userId": user["Id"]}, json=body)


async def initiate(
    api: httpx.AsyncClient, user: dict[str, Any], body: dict[str, Any], **headers: str
) -> httpx.Response:
    return await api.post(
        f"{PAYOUTS}/initiate", params={"userId": user["Id"]}, json=body, headers=headers
    )


async def verify(
    api: httpx.AsyncClient, user: dict[str, Any], approval_id: str, token: str
) -> httpx.Response:
    return await api.post(
        f"{PAYOUTS}/approvals/{approval_id}/verify",
        params={"userId": user["Id"]},
        json={"VerificationToken": token},
    )


async def initiated(
    api: httpx.AsyncClient, user: dict[str, Any], body: dict[str, Any]
) -> dict[str, Any]:
    response = await initiate(api, user, body)
    assert response.status_code == 201, response.text
    return dict(response.json())


async def approved(
    api: httpx.AsyncClient, user: dict[str, Any], body: dict[str, Any]
) -> dict[str, Any]:
    """Initiate and verify: the approval, `VERIFIED`."""
    challenge = await initiated(api, user, body)
    response = await verify(api, user, challenge["ApprovalId"], challenge["VerificationToken"])
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "VERIFIED"
    return dict(response.json())


async def create(
    api: httpx.AsyncClient,
    user: dict[str, Any],
    body: dict[str, Any],
    approval_id: str,
    **headers: str,
) -> httpx.Response:
    return await api.post(
        PAYOUTS,
        params={"userId": user["Id"]},
        json={**body, "ApprovalId": approval_id},
        headers=headers,
    )


async def pay(api: httpx.AsyncClient, user: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """The whole flow: initiate, verify, create; returns the 201 payout."""
    approval = await approved(api, user, body)
    response = await create(api, user, body, approval["ApprovalId"])
    assert response.status_code == 201, response.text
    return dict(response.json())


async def payout_setup(
    api: httpx.AsyncClient, funds: str = "1000.00", currency: str = "EUR", **payee: Any
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A banking user with `funds` in the default budget and a verified payee (SEPA EUR
    unless overridden): (user, budget, payee)."""
    user, budget = await funded_user(api, funds, currency)
    return user, budget, await verified_payee(api, user, **payee)


async def balance(
    api: httpx.AsyncClient, user: dict[str, Any], budget_id: str, currency: str
) -> dict[str, Decimal]:
    """Posted, PendingDebits and Available of one budget currency."""
    found = next(b for b in await budgets(api, user["Id"]) if b["BudgetId"] == budget_id)
    row = balance_of(found, currency)
    return {k: Decimal(str(row[k])) for k in ("Posted", "PendingDebits", "Available")}


async def get_payout(
    api: httpx.AsyncClient, user: dict[str, Any], payout_id: int
) -> dict[str, Any]:
    response = await api.get(f"{PAYOUTS}/{payout_id}", params={"userId": user["Id"]})
    assert response.status_code == 200, response.text
    return dict(response.json())


async def move_payout(api: httpx.AsyncClient, payout_id: int, status: str) -> httpx.Response:
    return await api.post(
        f"/api/v2/sandbox/banking/payouts/{payout_id}/status", json={"Status": status}
    )


async def move_batch(api: httpx.AsyncClient, batch_id: str, status: str) -> httpx.Response:
    return await api.post(
        f"/api/v2/sandbox/banking/payment-batches/{batch_id}/status", json={"Status": status}
    )


async def cancel_order(api: httpx.AsyncClient, batch_id: str) -> httpx.Response:
    return await api.post(f"/api/v2/sandbox/banking/payment-batches/{batch_id}/order/cancel")


async def events_of(api: httpx.AsyncClient, type_: str) -> list[dict[str, Any]]:
    response = await api.get("/api/v2/events", params={"type": type_})
    assert response.status_code == 200, response.text
    return list(response.json()["Items"])
