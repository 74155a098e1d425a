"""Money invariants of a mandate's allowance, for any sequence of collections: what is
accepted never exceeds `MaxAmount`, `RemainingThisPeriod` is exactly what is left, and every
cent that left the budget reached the company's master account."""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from finplat.http.rate_limit import ApiKeyRateLimiter
from tests.banking.steps import available, credit
from tests.payments.steps import authorise, collect, mandate, master_posted, receiver


@pytest.fixture(autouse=True)
def _unthrottled(app: FastAPI) -> None:
    """The examples send their requests back to back, faster than the default 100 a second
    a key may (a 429 is not what the invariants are about)."""
    app.state.rate_limiter = ApiKeyRateLimiter("100000/second")


CENTS = st.integers(min_value=1, max_value=6_000)
# One funded user per client, shared by the examples (each has a mandate of its own): opening
# a bank account per example would make the test minutes long.
_PAYERS: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}


async def _payer(api: httpx.AsyncClient) -> tuple[dict[str, Any], dict[str, Any]]:
    if id(api) not in _PAYERS:
        user, budget = await receiver(api)
        await credit(api, user["Id"], budget["BudgetId"], "100000.00")
        _PAYERS[id(api)] = (user, budget)
    return _PAYERS[id(api)]


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(amounts=st.lists(CENTS, min_size=1, max_size=8), max_cents=st.integers(1, 10_000))
async def test_accepted_collections_never_exceed_the_allowance(
    api: httpx.AsyncClient, amounts: list[int], max_cents: int
) -> None:
    user, budget = await _payer(api)
    max_amount = Decimal(max_cents) / 100
    created = await mandate(api, user["Id"], MaxAmount=str(max_amount))
    assert (await authorise(api, created["Id"])).status_code == 200
    before_budget = await available(api, user["Id"], budget["BudgetId"], "EUR")
    before_master = await master_posted(api)
    accepted = Decimal(0)
    for cents in amounts:
        amount = Decimal(cents) / 100
        response = await collect(api, created["Id"], str(amount), uuid.uuid4().hex)
        if accepted + amount <= max_amount:
            assert response.status_code == 201, response.text
            assert response.json()["Status"] == "COMPLETED"
            accepted += amount
        else:
            assert response.status_code == 409
            assert response.json()["Code"] in {
                "MANDATE_ALLOWANCE_EXCEEDED",
                "MANDATE_MAX_AMOUNT_EXCEEDED",
            }
    read = (await api.get(f"/api/v2/payments/mandates/{created['Id']}")).json()
    assert Decimal(read["RemainingThisPeriod"]) == max_amount - accepted
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == before_budget - accepted
    assert await master_posted(api) == before_master + accepted
