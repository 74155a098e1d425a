"""The MOR merchant's wallets are its master ledger accounts; balances add its cards'."""

from __future__ import annotations

from decimal import Decimal

from finplat.mor.access import PREFIX
from tests.cards.funding.steps import active_card, set_fees, topup
from tests.conftest import Tenant
from tests.mor.money_steps import fund, wallet


async def test_a_funding_opens_the_wallet_in_its_currency(mor_tenant: Tenant) -> None:
    await fund(mor_tenant.client, "250.50", "EUR")
    listed = await mor_tenant.client.get(f"{PREFIX}/wallets")
    assert listed.status_code == 200, listed.text
    assert listed.json()["Wallets"] == [
        {
            "Currency": "EUR",
            "Available": 250.5,
            "Posted": 250.5,
            "PendingDebits": 0,
            "PendingCredits": 0,
        }
    ]


async def test_the_wallet_is_the_company_master_account(mor_tenant: Tenant) -> None:
    await fund(mor_tenant.client, 100)
    master = (await mor_tenant.client.get("/api/v2/company/balances")).json()["Balances"][0]
    assert (await wallet(mor_tenant.client))["Available"] == master["Available"]


async def test_a_currency_without_a_wallet_is_not_found(mor_tenant: Tenant) -> None:
    response = await mor_tenant.client.get(f"{PREFIX}/wallets/GBP")
    assert response.status_code == 404
    assert response.json()["Code"] == "WALLET_NOT_FOUND"


async def test_an_unknown_currency_is_a_validation_error(mor_tenant: Tenant) -> None:
    response = await mor_tenant.client.get(f"{PREFIX}/wallets/XYZ")
    assert response.status_code == 400
    assert "currency" in response.json()["ValidationErrors"]


async def test_opening_a_wallet_makes_it_empty_and_opening_it_again_changes_nothing(
    mor_tenant: Tenant,
) -> None:
    first = await mor_tenant.client.post(f"{PREFIX}/wallets", json={"Currency": "gbp"})
    assert first.status_code == 200, first.text
    assert first.json()["Currency"] == "GBP"
    assert first.json()["Available"] == 0
    await fund(mor_tenant.client, 10, "GBP")
    again = await mor_tenant.client.post(f"{PREFIX}/wallets", json={"Currency": "GBP"})
    assert again.json()["Available"] == 10
    assert [
        w["Currency"] for w in (await mor_tenant.client.get(f"{PREFIX}/wallets")).json()["Wallets"]
    ] == ["GBP"]


async def test_balances_add_the_cards_balances_to_the_wallet_per_currency(
    mor_tenant: Tenant,
) -> None:
    api = mor_tenant.client
    first = await active_card(api, master=1000.0)
    await set_fees(api, first)
    second = await active_card(api, master=0)
    assert (await topup(api, first, 120)).status_code == 200
    assert (await topup(api, second, "30.25")).status_code == 200
    response = await api.get(f"{PREFIX}/balances")
    assert response.status_code == 200, response.text
    [usd] = response.json()["Currencies"]
    assert usd["Currency"] == "USD"
    assert Decimal(str(usd["Cards"]["Posted"])) == Decimal("150.25")
    assert usd["Cards"]["Count"] == 2
    wallet_available = Decimal(str(usd["Wallet"]["Available"]))
    assert wallet_available == Decimal(1000) - Decimal("150.25")


async def test_balances_of_a_merchant_without_money_are_empty(mor_tenant: Tenant) -> None:
    response = await mor_tenant.client.get(f"{PREFIX}/balances")
    assert response.status_code == 200
    assert response.json() == {"Currencies": []}
