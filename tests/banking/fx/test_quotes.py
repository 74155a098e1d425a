"""Quotes: `/banking/quotations` and `/banking/orders/quote`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import httpx
from fastapi import FastAPI

from tests.banking.fx.steps import execute, quote, quoted
from tests.banking.steps import banking_user, create_budget, default_budget, funded_user
from tests.conftest import TenantFactory
from tests.onboarding import set_fault


async def test_a_quote_fixing_the_sell_amount_prices_the_buy_amount_with_the_spread(
    api: httpx.AsyncClient,
) -> None:
    user = await banking_user(api)
    budget = await default_budget(api, user["Id"])
    before = datetime.now(UTC)
    body = await quoted(api, user, sell="EUR", buy="USD", amount=100, side="SELL")
    assert body["UnavailableReason"] is None
    assert body["RetryAfterSeconds"] is None
    assert body["QuoteId"].startswith("qt_")
    assert len(body["QuoteId"]) == 27
    assert body["AccountId"] == user["AccountId"]
    assert body["BudgetId"] == budget["BudgetId"]
    assert body["Provider"] == "bankprov"
    assert body["FixedSide"] == "SELL"
    assert (body["SellCurrency"], body["BuyCurrency"]) == ("EUR", "USD")
    assert body["SellAmount"] == 100
    # Mid 1.08 USD per EUR, less 0.25 % for the customer.
    assert Decimal(str(body["ExchangeRate"])) == Decimal("1.0773")
    assert Decimal(str(body["BuyAmount"])) == Decimal("107.73")
    expires = datetime.fromisoformat(body["ExpiresAt"])
    assert before + timedelta(seconds=25) < expires <= datetime.now(UTC) + timedelta(seconds=30)


async def test_a_quote_fixing_the_buy_amount_rounds_the_sell_amount_up(
    api: httpx.AsyncClient,
) -> None:
    user = await banking_user(api)
    body = await quoted(api, user, sell="EUR", buy="USD", amount=100, side="BUY")
    assert body["BuyAmount"] == 100
    # 100 / 1.0773 = 92.8246...: the customer pays the next cent.
    assert Decimal(str(body["SellAmount"])) == Decimal("92.83")
    assert Decimal(str(body["ExchangeRate"])) == Decimal("1.0773")


async def test_the_rate_is_buy_units_per_sell_unit_and_always_below_mid(
    api: httpx.AsyncClient,
) -> None:
    user = await banking_user(api)
    body = await quoted(api, user, sell="USD", buy="EUR", amount=1000, side="SELL")
    rate = Decimal(str(body["ExchangeRate"]))
    assert rate < 1 / Decimal("1.08")
    assert rate == Decimal("0.92361111")
    assert Decimal(str(body["BuyAmount"])) == Decimal("923.61")


async def test_stablecoin_amounts_use_six_decimals(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    body = await quoted(api, user, sell="GBP", buy="USDC", amount=10, side="SELL")
    # 10 GBP * 1.27 * 0.9975 = 12.66825 USDC, exactly representable in 6 decimals.
    assert Decimal(str(body["BuyAmount"])) == Decimal("12.66825")
    body = await quoted(api, user, sell="GBP", buy="USDC", amount=1.000001, side="BUY")
    assert Decimal(str(body["BuyAmount"])) == Decimal("1.000001")


async def test_a_transient_provider_failure_is_an_unavailable_quote_not_an_error(
    api: httpx.AsyncClient,
) -> None:
    user = await banking_user(api)
    budget = await default_budget(api, user["Id"])
    # One failure is enough: the quote is not retried in-process, the client asks again.
    await set_fault(api, "bankprov", "quote", "transient", count=1)
    response = await quote(api, user)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["IsAvailable"] is False
    assert body["UnavailableReason"] == "QUOTE_TEMPORARILY_UNAVAILABLE"
    assert body["RetryAfterSeconds"] == 5
    assert body["QuoteId"] is None
    assert body["SellAmount"] is None
    assert body["BuyAmount"] is None
    assert body["ExchangeRate"] is None
    assert body["ExpiresAt"] is None
    assert body["BudgetId"] == budget["BudgetId"]
    assert (await quoted(api, user))["IsAvailable"] is True


async def test_a_provider_timeout_is_an_unavailable_quote(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    await set_fault(api, "bankprov", "quote", "timeout")
    response = await quote(api, user)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["IsAvailable"] is False
    assert body["UnavailableReason"] == "QUOTE_TEMPORARILY_UNAVAILABLE"
    assert body["RetryAfterSeconds"] == 5


async def test_a_provider_refusal_of_a_quote_stays_an_error(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    await set_fault(api, "bankprov", "quote", "error", HttpStatus=409)
    response = await quote(api, user)
    assert response.status_code == 409
    assert response.json()["Code"] == "PROVIDER_REJECTED"


async def test_an_order_quote_without_a_user_takes_any_account_of_the_company(
    api: httpx.AsyncClient,
) -> None:
    user = await banking_user(api)
    body = await quoted(api, user, path="/api/v2/banking/orders/quote", user_id=None)
    assert body["AccountId"] == user["AccountId"]
    body = await quoted(api, user, path="/api/v2/banking/orders/quote")
    assert body["AccountId"] == user["AccountId"]


async def test_a_quotation_without_a_user_is_for_the_accounts_holder(
    api: httpx.AsyncClient,
) -> None:
    await banking_user(api)  # another user of the company, who must not be taken
    user, _ = await funded_user(api, "500.00", "EUR")
    body = await quoted(api, user, user_id=None)
    assert body["AccountId"] == user["AccountId"]
    trade = await execute(api, user, body["QuoteId"])
    assert trade.status_code == 201, trade.text


async def test_a_quotation_without_a_user_for_another_companys_account_is_not_found(
    api: httpx.AsyncClient, make_tenant: TenantFactory
) -> None:
    theirs = await banking_user((await make_tenant("Other Ltd")).client)
    response = await quote(api, theirs, user_id=None)
    assert (response.status_code, response.json()["Code"]) == (404, "ACCOUNT_NOT_FOUND")


async def test_an_order_quote_for_another_users_account_is_not_found(
    api: httpx.AsyncClient,
) -> None:
    owner = await banking_user(api)
    other = await banking_user(api)
    response = await quote(api, owner, path="/api/v2/banking/orders/quote", user_id=other["Id"])
    assert response.status_code == 404
    assert response.json()["Code"] == "ACCOUNT_NOT_FOUND"


async def test_a_quotation_for_another_users_account_is_not_found(api: httpx.AsyncClient) -> None:
    owner = await banking_user(api)
    other = await banking_user(api)
    response = await quote(api, owner, user_id=other["Id"])
    assert response.status_code == 404
    assert response.json()["Code"] == "ACCOUNT_NOT_FOUND"


async def test_an_order_quote_for_another_companys_account_is_not_found(
    api: httpx.AsyncClient, make_tenant: TenantFactory
) -> None:
    theirs = await banking_user((await make_tenant("Other Ltd")).client)
    await banking_user(api)
    response = await quote(api, theirs, path="/api/v2/banking/orders/quote", user_id=None)
    assert response.status_code == 404
    assert response.json()["Code"] == "ACCOUNT_NOT_FOUND"


async def test_a_budget_without_one_of_the_currencies_is_a_conflict(
    api: httpx.AsyncClient,
) -> None:
    user = await banking_user(api)
    budget = await create_budget(api, user, "Euro only", Currencies=["EUR", "GBP"])
    response = await quote(api, user, sell="EUR", buy="USD", BudgetId=budget["BudgetId"])
    assert response.status_code == 409
    assert response.json()["Code"] == "CURRENCY_NOT_IN_BUDGET"
    body = await quoted(api, user, sell="EUR", buy="GBP", BudgetId=budget["BudgetId"])
    assert body["BudgetId"] == budget["BudgetId"]


async def test_another_users_budget_is_not_found(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    other = await banking_user(api)
    theirs = await default_budget(api, other["Id"])
    response = await quote(api, user, BudgetId=theirs["BudgetId"])
    assert response.status_code == 404
    assert response.json()["Code"] == "BUDGET_NOT_FOUND"


async def test_the_same_currency_on_both_sides_is_invalid(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    response = await quote(api, user, sell="EUR", buy="EUR")
    assert response.status_code == 400
    assert response.json()["Code"] == "VALIDATION_ERROR"


async def test_the_amount_takes_the_decimals_of_the_fixed_sides_currency(
    api: httpx.AsyncClient,
) -> None:
    user = await banking_user(api)
    response = await quote(api, user, sell="EUR", buy="USDC", amount=10.001, side="SELL")
    assert response.status_code == 400
    assert response.json()["Code"] == "INVALID_AMOUNT"
    await quoted(api, user, sell="EUR", buy="USDC", amount=10.001, side="BUY")


async def test_an_amount_below_the_minimum_trade_is_invalid(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    response = await quote(api, user, amount=0.5)
    assert response.status_code == 400
    assert response.json()["Code"] == "INVALID_AMOUNT"


def test_the_document_states_the_currency_and_precision_rules(app: FastAPI) -> None:
    document = app.openapi()
    schema = document["components"]["schemas"]["QuoteRequest"]
    pairs, precision = (rule["anyOf"] for rule in schema["allOf"])
    eur = next(b for b in pairs if b["properties"]["SellCurrency"]["const"] == "EUR")
    assert "EUR" not in eur["properties"]["BuyCurrency"]["enum"]
    assert {
        (b["properties"]["FixedSide"]["const"], b["properties"]["Amount"]["multipleOf"])
        for b in precision
    } == {("SELL", 0.01), ("SELL", 0.000001), ("BUY", 0.01), ("BUY", 0.000001)}
    assert schema["properties"]["Amount"]["minimum"] == 1
