"""The aggregated balance counts the user's cards, each under the provider that issued it."""

from __future__ import annotations

import httpx

from tests.banking.steps import funded_user
from tests.cards.funding.steps import fund_master, purchase, set_fees, topup
from tests.cards.steps import ordered_card
from tests.cards.transactions.steps import authorize
from tests.onboarding import create_user


async def test_aggregated_balance_sums_cards_under_their_issuing_provider(
    api: httpx.AsyncClient,
) -> None:
    user, _ = await funded_user(api, "100.00", "USD")
    card = await ordered_card(api, user, "cardprov")
    bankprov_card = await ordered_card(api, user, "bankprov")
    cancelled = await ordered_card(api, user, "cardprov")
    await fund_master(api, 1000.0)
    await set_fees(api, card)
    assert (await topup(api, card, 40)).status_code == 200
    assert (await topup(api, bankprov_card, 10)).status_code == 200
    assert (await purchase(api, card, 2.5))["Approved"] is True
    response = await api.delete(
        f"/api/v2/cards/{cancelled['Id']}", params={"userId": cancelled["UserId"]}
    )
    assert response.status_code == 200, response.text
    response = await api.get("/api/v2/banking/balance", params={"userId": user["Id"]})
    assert response.status_code == 200, response.text
    usd = next(b for b in response.json()["Balances"] if b["Currency"] == "USD")
    assert usd["Available"] == 147.5
    assert usd["Posted"] == 147.5
    assert usd["Providers"] == [
        {"Provider": "bankprov", "Available": 110},
        {"Provider": "cardprov", "Available": 37.5},
    ]


async def test_assets_list_each_card_that_is_not_cancelled_beside_the_budget_balances(
    api: httpx.AsyncClient,
) -> None:
    user, budget = await funded_user(api, "100.00", "USD")
    card = await ordered_card(api, user, "cardprov")
    cancelled = await ordered_card(api, user, "cardprov")
    await fund_master(api, 1000.0)
    await set_fees(api, card)
    assert (await topup(api, card, 40)).status_code == 200
    assert (await purchase(api, card, 2.5))["Approved"] is True
    response = await api.delete(
        f"/api/v2/cards/{cancelled['Id']}", params={"userId": cancelled["UserId"]}
    )
    assert response.status_code == 200, response.text
    response = await api.get(f"/api/v2/users/{user['Id']}/assets")
    assert response.status_code == 200, response.text
    assets = response.json()["Assets"]
    cards = [a for a in assets if a["Source"] == "CARD"]
    assert cards == [
        {
            "Source": "CARD",
            "Currency": "USD",
            "Type": "FIAT",
            "Provider": "cardprov",
            "BalanceId": None,
            "BudgetId": None,
            "CardId": card["Id"],
            "Total": 37.5,
            "Available": 37.5,
        }
    ]
    usd = next(a for a in assets if a["Source"] == "BUDGET" and a["Currency"] == "USD")
    assert (usd["BudgetId"], usd["CardId"], usd["Available"]) == (budget["BudgetId"], None, 100)


async def test_aggregated_balance_counts_a_cards_open_hold_against_available_only(
    api: httpx.AsyncClient,
) -> None:
    user, _ = await funded_user(api, "100.00", "USD")
    card = await ordered_card(api, user, "cardprov")
    await fund_master(api, 1000.0)
    await set_fees(api, card)
    assert (await topup(api, card, 40)).status_code == 200
    assert (await authorize(api, card, 15))["Approved"] is True
    response = await api.get("/api/v2/banking/balance", params={"userId": user["Id"]})
    usd = next(b for b in response.json()["Balances"] if b["Currency"] == "USD")
    assert usd["Posted"] == 140
    assert usd["Available"] == 125
    assert usd["Providers"] == [
        {"Provider": "bankprov", "Available": 100},
        {"Provider": "cardprov", "Available": 25},
    ]


async def test_aggregated_balance_of_a_user_holding_nothing_is_empty(
    api: httpx.AsyncClient,
) -> None:
    user = await create_user(api)
    response = await api.get("/api/v2/banking/balance", params={"userId": user["Id"]})
    assert response.status_code == 200, response.text
    assert response.json()["Balances"] == []


async def test_aggregated_balance_of_an_unknown_user_is_404(api: httpx.AsyncClient) -> None:
    response = await api.get("/api/v2/banking/balance", params={"userId": 987654})
    assert response.status_code == 404, response.text
    assert response.json()["Code"] == "USER_NOT_FOUND"
