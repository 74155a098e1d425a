"""The aggregated balance counts the user's cards, each under the provider that issued it."""

from __future__ import annotations

import httpx

from tests.banking.steps import funded_user
from tests.cards.funding.steps import fund_master, purchase, set_fees, topup
from tests.cards.steps import ordered_card


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
