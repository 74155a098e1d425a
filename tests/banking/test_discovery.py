"""Banking discovery: accounts, budgets, balances, banking details, assets, incoming money."""

from __future__ import annotations

from decimal import Decimal

import httpx
from schwifty import IBAN

from tests.banking.steps import (
    available,
    banking_user,
    budgets,
    create_budget,
    credit,
    default_budget,
    funded_user,
)
from tests.bankprov_onboarding.steps import onboarded_user


async def test_an_open_account_has_a_default_budget_holding_every_currency(
    api: httpx.AsyncClient,
) -> None:
    user = await banking_user(api)
    found = await budgets(api, user["Id"])
    assert len(found) == 1
    budget = found[0]
    assert budget["IsDefault"] is True
    assert budget["Provider"] == "bankprov"
    assert budget["AccountId"] == user["AccountId"]
    assert budget["BudgetId"].startswith("bud_")
    assert [b["Currency"] for b in budget["Balances"]] == sorted(
        ["EUR", "GBP", "USD", "USDC", "USDT"]
    )
    assert all(b["Available"] == 0 for b in budget["Balances"])


async def test_budgets_before_the_account_is_open_are_a_conflict(api: httpx.AsyncClient) -> None:
    user = await onboarded_user(api)
    response = await api.get(f"/api/v2/banking/users/{user['Id']}/budgets")
    assert response.status_code == 409
    assert response.json()["Code"] == "BANKING_ACCOUNT_NOT_ACTIVE"


async def test_listing_budgets_twice_keeps_the_same_ids(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    first = await budgets(api, user["Id"])
    second = await budgets(api, user["Id"])
    assert [b["BudgetId"] for b in first] == [b["BudgetId"] for b in second]


async def test_incoming_sepa_credit_reaches_the_budget_and_is_a_completed_transaction(
    api: httpx.AsyncClient,
) -> None:
    user = await banking_user(api)
    budget = await default_budget(api, user["Id"])
    tx = await credit(api, user["Id"], budget["BudgetId"], "250.75", "EUR")
    assert tx["Type"] == "INCOMING_PAYMENT"
    assert tx["Status"] == "COMPLETED"
    assert tx["Amount"] == 250.75
    assert tx["UserId"] == user["Id"]
    assert tx["Metadata"]["scheme"] == "SEPA"
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("250.75")


async def test_a_scheme_that_does_not_carry_the_currency_is_invalid(
    api: httpx.AsyncClient,
) -> None:
    user = await banking_user(api)
    budget = await default_budget(api, user["Id"])
    response = await api.post(
        f"/api/v2/sandbox/banking/budgets/{budget['BudgetId']}/credits",
        params={"userId": user["Id"]},
        json={"Currency": "GBP", "Amount": 10, "Scheme": "SEPA", "SenderName": "Ada"},
    )
    assert response.status_code == 400
    assert response.json()["Code"] == "VALIDATION_ERROR"


async def test_a_credit_in_a_currency_the_budget_does_not_hold_is_a_conflict(
    api: httpx.AsyncClient,
) -> None:
    user = await banking_user(api)
    euros = await create_budget(api, user, "Euros", Currencies=["EUR"])
    response = await api.post(
        f"/api/v2/sandbox/banking/budgets/{euros['BudgetId']}/credits",
        params={"userId": user["Id"]},
        json={"Currency": "GBP", "Amount": 10, "Scheme": "FPS", "SenderName": "Ada"},
    )
    assert (response.status_code, response.json()["Code"]) == (409, "CURRENCY_NOT_IN_BUDGET")
    assert await available(api, user["Id"], euros["BudgetId"], "EUR") == Decimal("0")


async def test_aggregated_balance_sums_budgets_per_currency(api: httpx.AsyncClient) -> None:
    user, _ = await funded_user(api, "100.00", "EUR")
    savings = await create_budget(api, user, "Savings", Currencies=["EUR", "GBP"])
    await credit(api, user["Id"], savings["BudgetId"], "50.25", "EUR")
    await credit(api, user["Id"], savings["BudgetId"], "10.00", "GBP")
    response = await api.get("/api/v2/banking/balance", params={"userId": user["Id"]})
    assert response.status_code == 200, response.text
    by_currency = {b["Currency"]: b for b in response.json()["Balances"]}
    assert by_currency["EUR"]["Available"] == 150.25
    assert by_currency["EUR"]["Providers"] == [{"Provider": "bankprov", "Available": 150.25}]
    assert by_currency["GBP"]["Available"] == 10


async def test_created_budget_holds_only_its_currencies(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    savings = await create_budget(api, user, "Holiday", Currencies=["GBP", "GBP", "EUR"])
    assert savings["Name"] == "Holiday"
    assert savings["IsDefault"] is False
    assert sorted(b["Currency"] for b in savings["Balances"]) == ["EUR", "GBP"]
    assert len(await budgets(api, user["Id"])) == 2


async def test_creating_a_budget_with_another_users_account_is_not_found(
    api: httpx.AsyncClient,
) -> None:
    user = await banking_user(api)
    other = await banking_user(api)
    response = await api.post(
        f"/api/v2/banking/users/{user['Id']}/budgets",
        json={"AccountId": other["AccountId"], "Name": "Mine"},
    )
    assert response.status_code == 404
    assert response.json()["Code"] == "ACCOUNT_NOT_FOUND"


async def test_budget_creation_replays_with_the_same_idempotency_key(
    api: httpx.AsyncClient,
) -> None:
    user = await banking_user(api)
    body = {"AccountId": user["AccountId"], "Name": "Rent"}
    headers = {"Idempotency-Key": "budget-rent-1"}
    path = f"/api/v2/banking/users/{user['Id']}/budgets"
    first = await api.post(path, json=body, headers=headers)
    again = await api.post(path, json=body, headers=headers)
    assert first.status_code == again.status_code == 201
    assert first.json()["BudgetId"] == again.json()["BudgetId"]
    assert len(await budgets(api, user["Id"])) == 2


async def test_banking_info_gives_a_valid_iban_and_bic(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    response = await api.get(f"/api/v2/banking/users/{user['Id']}/bankprov-banking-info")
    assert response.status_code == 200, response.text
    body = response.json()
    iban = IBAN(body["Iban"])
    assert body["Bic"] == str(iban.bic)
    assert body["Provider"] == "bankprov"
    assert body["AccountId"] == user["AccountId"]
    assert body["AccountHolderName"] == f"{user['FirstName']} {user['LastName']}"


async def test_accounts_list_the_open_provider_accounts(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    response = await api.get("/api/v2/banking/accounts", params={"userId": user["Id"]})
    assert response.status_code == 200, response.text
    accounts = {a["Provider"]: a for a in response.json()["Accounts"]}
    assert accounts["bankprov"]["AccountId"] == user["AccountId"]
    assert accounts["bankprov"]["ProviderType"] == 2
    assert accounts["bankprov"]["Status"] == "approved"


async def test_assets_and_balance_detail_use_the_returned_balance_id(
    api: httpx.AsyncClient,
) -> None:
    user, budget = await funded_user(api, "5.000001", "USDC")
    assets = (await api.get(f"/api/v2/users/{user['Id']}/assets")).json()["Assets"]
    usdc = next(a for a in assets if a["Currency"] == "USDC")
    assert usdc["Type"] == "CRYPTO"
    assert usdc["Available"] == 5.000001
    detail = await api.get(
        f"/api/v2/banking/balances/{usdc['BalanceId']}", params={"userId": user["Id"]}
    )
    assert detail.status_code == 200, detail.text
    assert detail.json()["BudgetId"] == budget["BudgetId"]


async def test_a_balance_id_of_another_user_is_not_found(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    other = await banking_user(api)
    theirs = (await default_budget(api, other["Id"]))["Balances"][0]["BalanceId"]
    response = await api.get(f"/api/v2/banking/balances/{theirs}", params={"userId": user["Id"]})
    assert response.status_code == 404
    assert response.json()["Code"] == "BALANCE_NOT_FOUND"
