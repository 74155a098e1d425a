"""Assignment of a MOR card to a user of the company and unassignment: the balance returns to
the merchant's wallet, and a new assignee never inherits a balance or an earlier assignee's
transactions."""

from __future__ import annotations

from decimal import Decimal

from fastapi import FastAPI

from finplat.mor.access import PREFIX
from finplat.mor.cards.assignments import cards_assigned_to
from tests.cards.funding.steps import master_available, purchase
from tests.cards.steps import approved_card_user
from tests.cards.transactions.steps import authorize
from tests.conftest import Tenant, TenantFactory
from tests.mor.card_steps import assign, balance, fund, mor_card, read_card, unassign
from tests.onboarding import create_user


async def test_unassigning_returns_the_whole_balance_to_the_merchant_wallet(
    mor_tenant: Tenant,
) -> None:
    api = mor_tenant.client
    card = await mor_card(api)
    before = await master_available(api)
    assert (await fund(api, card["Id"], 100)).status_code == 200
    assert await master_available(api) == before - 100
    response = await unassign(api, card["Id"])
    assert response.status_code == 200, response.text
    assert response.json()["AssignedUserId"] is None
    assert Decimal(str(response.json()["AvailableBalance"])) == 0
    assert await master_available(api) == before


async def test_an_unassigned_card_cannot_be_funded(mor_tenant: Tenant) -> None:
    api = mor_tenant.client
    card = await mor_card(api)
    assert (await unassign(api, card["Id"])).status_code == 200
    response = await fund(api, card["Id"], 50)
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "MOR_CARD_NOT_ASSIGNED"


async def test_a_new_assignee_starts_at_a_zero_balance(mor_tenant: Tenant) -> None:
    api = mor_tenant.client
    card = await mor_card(api)
    assert (await fund(api, card["Id"], 80)).status_code == 200
    assert (await unassign(api, card["Id"])).status_code == 200
    newcomer = await approved_card_user(api)
    response = await assign(api, card["Id"], newcomer["Id"])
    assert response.status_code == 200, response.text
    assert response.json()["AssignedUserId"] == newcomer["Id"]
    assert await balance(api, card["Id"]) == 0


async def test_an_assigned_card_cannot_be_assigned_to_someone_else(mor_tenant: Tenant) -> None:
    api = mor_tenant.client
    card = await mor_card(api)
    other = await approved_card_user(api)
    response = await assign(api, card["Id"], other["Id"])
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "MOR_CARD_ALREADY_ASSIGNED"


async def test_assigning_a_card_to_its_assignee_again_changes_nothing(mor_tenant: Tenant) -> None:
    api = mor_tenant.client
    card = await mor_card(api)
    response = await assign(api, card["Id"], card["AssignedUserId"])
    assert response.status_code == 200, response.text
    assert response.json()["AssignedUserId"] == card["AssignedUserId"]


async def test_a_user_without_approved_kyc_cannot_be_assigned_a_card(mor_tenant: Tenant) -> None:
    api = mor_tenant.client
    card = await mor_card(api)
    assert (await unassign(api, card["Id"])).status_code == 200
    unverified = await create_user(api)
    response = await assign(api, card["Id"], unverified["Id"])
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "KYC_NOT_APPROVED"


async def test_the_current_assignee_has_the_card_and_the_former_one_no_longer(
    app: FastAPI, mor_tenant: Tenant
) -> None:
    api = mor_tenant.client
    card = await mor_card(api)
    former = card["AssignedUserId"]
    newcomer = await approved_card_user(api)
    assert (await unassign(api, card["Id"])).status_code == 200
    assert (await assign(api, card["Id"], newcomer["Id"])).status_code == 200
    async with app.state.session_factory() as session:
        mine = await cards_assigned_to(session, mor_tenant.company_id, newcomer["Id"])
        theirs = await cards_assigned_to(session, mor_tenant.company_id, former)
    assert [v.card.id for v in mine] == [card["Id"]]
    assert theirs == []


async def test_a_new_assignee_does_not_see_the_former_assignees_transactions(
    mor_tenant: Tenant,
) -> None:
    api = mor_tenant.client
    card = await mor_card(api)
    assert (await fund(api, card["Id"], 50)).status_code == 200
    await purchase(api, card, 5)
    path = f"{PREFIX}/cards/{card['Id']}/transactions"
    before = await api.get(path)
    assert before.status_code == 200, before.text
    assert before.json()["Items"]
    assert (await unassign(api, card["Id"])).status_code == 200
    assert (await api.get(path)).json()["Items"] == []
    newcomer = await approved_card_user(api)
    assert (await assign(api, card["Id"], newcomer["Id"])).status_code == 200
    after = await api.get(path)
    assert after.status_code == 200, after.text
    assert after.json()["Items"] == []


async def test_unassigning_a_card_held_by_a_pending_purchase_is_409_and_it_stays_unassigned(
    mor_tenant: Tenant,
) -> None:
    api = mor_tenant.client
    card = await mor_card(api)
    assert (await fund(api, card["Id"], 50)).status_code == 200
    await authorize(api, card, 5)
    response = await unassign(api, card["Id"])
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "CARD_BALANCE_NOT_ZERO"
    after = await read_card(api, card["Id"])
    assert after["AssignedUserId"] is None
    assert Decimal(str(after["AvailableBalance"])) == 0


async def test_cancelling_a_mor_card_returns_its_balance_to_the_wallet(mor_tenant: Tenant) -> None:
    api = mor_tenant.client
    card = await mor_card(api)
    before = await master_available(api)
    assert (await fund(api, card["Id"], 40)).status_code == 200
    response = await api.post(f"{PREFIX}/cards/{card['Id']}/cancel")
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "CANCELLED"
    assert response.json()["AssignedUserId"] == card["AssignedUserId"]
    assert await master_available(api) == before


async def test_a_mor_card_widget_is_the_providers_page(mor_tenant: Tenant) -> None:
    api = mor_tenant.client
    card = await mor_card(api, master=0)
    response = await api.get(f"{PREFIX}/cards/{card['Id']}/widget")
    assert response.status_code == 200, response.text
    assert response.json()["Url"]
    assert response.json()["ExpiresAt"]


async def test_another_companys_card_is_not_found(
    mor_tenant: Tenant, make_tenant: TenantFactory
) -> None:
    other = await make_tenant("Other MOR", mor=True)
    card = await mor_card(other.client, master=0)
    api = mor_tenant.client
    for response in (
        await api.get(f"{PREFIX}/cards/{card['Id']}"),
        await unassign(api, card["Id"]),
        await fund(api, card["Id"], 10),
        await api.get(f"{PREFIX}/cards/{card['Id']}/widget"),
    ):
        assert response.status_code == 404, response.text
        assert response.json()["Code"] == "CARD_NOT_FOUND"
