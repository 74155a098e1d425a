"""FX trades: `/banking/trades/execute` and `/banking/orders/trade`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from finplat.kit.clock import set_clock
from finplat.transactions.models import Transaction
from tests.banking.fx.steps import execute, quoted, refresh
from tests.banking.steps import (
    available,
    balance_of,
    banking_user,
    budgets,
    credit,
    funded_user,
)
from tests.conftest import Tenant
from tests.onboarding import set_fault


async def _pending_debits(api: httpx.AsyncClient, user_id: int, budget_id: str, cur: str) -> Any:
    found = next(b for b in await budgets(api, user_id) if b["BudgetId"] == budget_id)
    return Decimal(str(balance_of(found, cur)["PendingDebits"]))


def _later(seconds: float) -> None:
    set_clock(lambda: datetime.now(UTC) + timedelta(seconds=seconds))


async def test_executing_a_quote_moves_both_currencies_of_the_budget(
    api: httpx.AsyncClient,
) -> None:
    user, budget = await funded_user(api, "1000.00", "EUR")
    offer = await quoted(api, user, sell="EUR", buy="USD", amount=100, side="SELL")
    response = await execute(api, user, offer["QuoteId"])
    assert response.status_code == 201, response.text
    trade = response.json()
    assert trade["Success"] is True
    assert trade["Status"] == "COMPLETED"
    assert trade["TradeId"].startswith("bp_fx_")
    assert trade["QuoteId"] == offer["QuoteId"]
    assert trade["Amount"] == 100
    assert (trade["SellCurrency"], trade["BuyCurrency"]) == ("EUR", "USD")
    assert Decimal(str(trade["ReceivedAmount"])) == Decimal("107.73")
    assert Decimal(str(trade["ExchangeRate"])) == Decimal("1.0773")
    assert trade["Provider"] == "bankprov"
    assert trade["ExecutedAt"] is not None
    assert trade["ErrorMessage"] is None
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("900.00")
    assert await available(api, user["Id"], budget["BudgetId"], "USD") == Decimal("107.73")


async def test_a_buy_fixed_trade_receives_exactly_the_fixed_amount(
    api: httpx.AsyncClient,
) -> None:
    user, budget = await funded_user(api, "500.00", "GBP")
    offer = await quoted(api, user, sell="GBP", buy="EUR", amount=200, side="BUY")
    response = await execute(api, user, offer["QuoteId"])
    assert response.status_code == 201, response.text
    assert response.json()["ReceivedAmount"] == 200
    paid = Decimal(str(offer["SellAmount"]))
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("200.00")
    assert await available(api, user["Id"], budget["BudgetId"], "GBP") == Decimal("500.00") - paid


async def test_an_order_trade_without_a_user_executes_the_accounts_quote(
    api: httpx.AsyncClient,
) -> None:
    user, budget = await funded_user(api, "100.00", "EUR")
    offer = await quoted(api, user, path="/api/v2/banking/orders/quote", user_id=None, amount=50)
    response = await api.post(
        "/api/v2/banking/orders/trade",
        json={"QuoteId": offer["QuoteId"], "AccountId": user["AccountId"]},
    )
    assert response.status_code == 201, response.text
    assert response.json()["Status"] == "COMPLETED"
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("50.00")


async def test_the_account_may_be_left_out_when_the_user_is_named(api: httpx.AsyncClient) -> None:
    user, _ = await funded_user(api, "100.00", "EUR")
    offer = await quoted(api, user, amount=10)
    response = await api.post(
        "/api/v2/banking/trades/execute",
        params={"userId": user["Id"]},
        json={"QuoteId": offer["QuoteId"]},
    )
    assert response.status_code == 201, response.text


@pytest.mark.parametrize("path", ["/api/v2/banking/trades/execute", "/api/v2/banking/orders/trade"])
async def test_a_trade_without_a_quote_is_400_quote_id_required(
    api: httpx.AsyncClient, path: str
) -> None:
    user = await banking_user(api)
    await quoted(api, user)  # an open quote, which must not be guessed at
    for body in ({}, {"QuoteId": None}):
        response = await api.post(
            path, params={"userId": user["Id"]}, json={**body, "AccountId": user["AccountId"]}
        )
        assert (response.status_code, response.json()["Code"]) == (400, "QUOTE_ID_REQUIRED")
        assert list(response.json()["ValidationErrors"]) == ["QuoteId"]


def test_the_document_keeps_quote_id_optional_and_states_that_a_trade_needs_it(
    app: FastAPI,
) -> None:
    schemas = app.openapi()["components"]["schemas"]
    for name in ("TradeRequest", "OrderTradeRequest"):
        assert "QuoteId" not in schemas[name].get("required", [])
        assert schemas[name]["anyOf"] == [
            {"required": ["QuoteId"], "properties": {"QuoteId": {"type": "string"}}}
        ]


async def test_an_expired_quote_cannot_be_executed(api: httpx.AsyncClient) -> None:
    user, budget = await funded_user(api, "100.00", "EUR")
    offer = await quoted(api, user, amount=10)
    _later(31)
    response = await execute(api, user, offer["QuoteId"])
    assert response.status_code == 409
    assert response.json()["Code"] == "QUOTE_EXPIRED"
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("100.00")


async def test_a_quote_executes_once(api: httpx.AsyncClient) -> None:
    user, budget = await funded_user(api, "100.00", "EUR")
    offer = await quoted(api, user, amount=10)
    first = await execute(api, user, offer["QuoteId"], key="fx-once-1")
    assert first.status_code == 201, first.text
    again = await execute(api, user, offer["QuoteId"], key="fx-once-2")
    assert again.status_code == 409
    assert again.json()["Code"] == "QUOTE_ALREADY_EXECUTED"
    without_key = await execute(api, user, offer["QuoteId"])
    assert without_key.status_code == 409
    assert without_key.json()["Code"] == "QUOTE_ALREADY_EXECUTED"
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("90.00")


async def test_an_order_trade_of_a_quote_already_executed_is_a_conflict(
    api: httpx.AsyncClient,
) -> None:
    user, budget = await funded_user(api, "100.00", "EUR")
    offer = await quoted(api, user, path="/api/v2/banking/orders/quote", user_id=None, amount=10)
    body = {"QuoteId": offer["QuoteId"], "AccountId": user["AccountId"]}
    first = await api.post("/api/v2/banking/orders/trade", json=body)
    assert first.status_code == 201, first.text
    again = await api.post("/api/v2/banking/orders/trade", json=body)
    assert again.status_code == 409, again.text
    assert again.json()["Code"] == "QUOTE_ALREADY_EXECUTED"
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("90.00")


async def test_the_same_idempotency_key_replays_the_trade(api: httpx.AsyncClient) -> None:
    user, budget = await funded_user(api, "100.00", "EUR")
    offer = await quoted(api, user, amount=10)
    first = await execute(api, user, offer["QuoteId"], key="fx-replay")
    replay = await execute(api, user, offer["QuoteId"], key="fx-replay")
    assert first.status_code == replay.status_code == 201
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.content == first.content
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("90.00")


async def test_insufficient_funds_reserve_nothing_and_leave_the_quote_open(
    api: httpx.AsyncClient,
) -> None:
    user, budget = await funded_user(api, "5.00", "EUR")
    offer = await quoted(api, user, amount=10)
    response = await execute(api, user, offer["QuoteId"])
    assert response.status_code == 409
    assert response.json()["Code"] == "INSUFFICIENT_FUNDS"
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("5.00")
    assert await _pending_debits(api, user["Id"], budget["BudgetId"], "EUR") == 0
    # Nothing was consumed: once funded, the same quote executes.
    await credit(api, user["Id"], budget["BudgetId"], "5.00", "EUR")
    assert (await execute(api, user, offer["QuoteId"])).status_code == 201


async def test_another_users_quote_is_not_found(api: httpx.AsyncClient) -> None:
    owner, _ = await funded_user(api, "100.00", "EUR")
    other = await banking_user(api)
    offer = await quoted(api, owner, amount=10)
    response = await api.post(
        "/api/v2/banking/trades/execute",
        params={"userId": other["Id"]},
        json={"QuoteId": offer["QuoteId"]},
    )
    assert response.status_code == 404
    assert response.json()["Code"] == "QUOTE_NOT_FOUND"


async def test_an_account_that_is_not_the_quotes_is_not_found(api: httpx.AsyncClient) -> None:
    owner, _ = await funded_user(api, "100.00", "EUR")
    other = await banking_user(api)
    offer = await quoted(api, owner, amount=10)
    response = await api.post(
        "/api/v2/banking/orders/trade",
        json={"QuoteId": offer["QuoteId"], "AccountId": other["AccountId"]},
    )
    assert response.status_code == 404
    assert response.json()["Code"] == "QUOTE_NOT_FOUND"


async def test_an_unknown_quote_is_not_found(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    response = await execute(api, user, "qt_000000000000000000000000")
    assert response.status_code == 404
    assert response.json()["Code"] == "QUOTE_NOT_FOUND"


async def test_a_lost_provider_answer_is_pending_until_the_provider_settles_it(
    api: httpx.AsyncClient,
) -> None:
    user, budget = await funded_user(api, "100.00", "EUR")
    offer = await quoted(api, user, amount=40)
    await set_fault(api, "bankprov", "execute_trade", "timeout")
    response = await execute(api, user, offer["QuoteId"])
    assert response.status_code == 201, response.text
    trade = response.json()
    assert trade["Status"] == "PENDING"
    assert trade["Success"] is True
    assert trade["TradeId"] is None
    assert trade["ExecutedAt"] is None
    # The sell amount is reserved; nothing has arrived yet.
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("60.00")
    assert await _pending_debits(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("40.00")
    assert await available(api, user["Id"], budget["BudgetId"], "USD") == 0

    # Reading the transaction asks the provider, which did trade: it settles.
    read = await api.get(f"/api/v2/transactions/{trade['TransactionId']}")
    assert read.status_code == 200, read.text
    settled = read.json()
    assert settled["Type"] == "FX_TRADE"
    assert settled["Status"] == "COMPLETED"
    assert settled["ProviderReference"].startswith("bp_fx_")
    assert settled["Metadata"]["quoteId"] == offer["QuoteId"]
    assert settled["Metadata"]["buyCurrency"] == "USD"
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("60.00")
    assert await _pending_debits(api, user["Id"], budget["BudgetId"], "EUR") == 0
    received = Decimal(str(offer["BuyAmount"]))
    assert await available(api, user["Id"], budget["BudgetId"], "USD") == received


async def test_a_trade_the_provider_holds_as_pending_completes_later(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    user, budget = await funded_user(api, "100.00", "EUR")
    offer = await quoted(api, user, amount=25)
    await set_fault(api, "bankprov", "execute_trade", "pending")
    response = await execute(api, user, offer["QuoteId"])
    assert response.status_code == 201, response.text
    trade = response.json()
    assert trade["Status"] == "PENDING"
    assert trade["TradeId"].startswith("bp_fx_")
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("75.00")

    settled = await refresh(app, tenant.company_id, trade["TransactionId"])
    assert settled["Status"] == "COMPLETED"
    assert settled["ProviderReference"] == trade["TradeId"]
    received = Decimal(str(offer["BuyAmount"]))
    assert await available(api, user["Id"], budget["BudgetId"], "USD") == received
    # Settling again changes nothing.
    assert (await refresh(app, tenant.company_id, trade["TransactionId"]))["Status"] == "COMPLETED"
    assert await available(api, user["Id"], budget["BudgetId"], "USD") == received


async def test_a_trade_the_provider_never_received_is_failed_once_its_quote_is_dead(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    user, budget = await funded_user(api, "100.00", "EUR")
    offer = await quoted(api, user, amount=30)
    # Every attempt fails before the provider does anything (the call is retried twice).
    await set_fault(api, "bankprov", "execute_trade", "transient", count=3)
    response = await execute(api, user, offer["QuoteId"])
    assert response.status_code == 201, response.text
    trade = response.json()
    assert trade["Status"] == "PENDING"
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("70.00")

    # While the quote could still be executed, the outcome stays open.
    assert (await refresh(app, tenant.company_id, trade["TransactionId"]))["Status"] == "PENDING"

    _later(600)
    settled = await refresh(app, tenant.company_id, trade["TransactionId"])
    assert settled["Status"] == "FAILED"
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("100.00")
    assert await _pending_debits(api, user["Id"], budget["BudgetId"], "EUR") == 0


async def test_a_provider_refusal_releases_the_reservation_and_the_quote(
    api: httpx.AsyncClient,
) -> None:
    user, budget = await funded_user(api, "100.00", "EUR")
    offer = await quoted(api, user, amount=20)
    await set_fault(api, "bankprov", "execute_trade", "error", HttpStatus=409)
    refused = await execute(api, user, offer["QuoteId"])
    assert refused.status_code == 409
    assert refused.json()["Code"] == "PROVIDER_REJECTED"
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("100.00")
    assert await _pending_debits(api, user["Id"], budget["BudgetId"], "EUR") == 0
    retried = await execute(api, user, offer["QuoteId"])
    assert retried.status_code == 201, retried.text
    assert retried.json()["Status"] == "COMPLETED"
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("80.00")


async def test_a_trade_settled_by_a_read_during_its_execution_is_answered_completed(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The execute's copy of the transaction, read before the provider call, is stale once a
    read of the transaction settled the trade meanwhile: the execute answers the trade as it
    now is, and the buy amount arrives once."""
    user, budget = await funded_user(api, "100.00", "EUR")
    offer = await quoted(api, user, amount=40)
    banking = app.state.providers.banking
    original = banking.execute_trade

    async def settled_by_a_read_meanwhile(
        *, company_id: int, quote_id: str, idempotency_key: str
    ) -> Any:
        trade = await original(
            company_id=company_id, quote_id=quote_id, idempotency_key=idempotency_key
        )
        async with app.state.session_factory() as session:
            transaction_id = (
                await session.execute(
                    select(Transaction.id).where(Transaction.provider_key == idempotency_key)
                )
            ).scalar_one()
        assert (await refresh(app, company_id, transaction_id))["Status"] == "COMPLETED"
        return trade

    monkeypatch.setattr(banking, "execute_trade", settled_by_a_read_meanwhile)
    response = await execute(api, user, offer["QuoteId"])
    assert response.status_code == 201, response.text
    assert response.json()["Status"] == "COMPLETED"
    assert response.json()["TradeId"].startswith("bp_fx_")
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("60.00")
    received = Decimal(str(offer["BuyAmount"]))
    assert await available(api, user["Id"], budget["BudgetId"], "USD") == received
