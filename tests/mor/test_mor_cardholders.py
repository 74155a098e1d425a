"""The MOR merchant's cardholders: the users of the company who are a card's current
assignee."""

from __future__ import annotations

from finplat.mor.access import PREFIX
from tests.cards.steps import approved_card_user
from tests.conftest import Tenant, TenantFactory
from tests.mor.card_steps import assign, mor_card, unassign


async def test_cardholders_are_the_users_holding_a_card(mor_tenant: Tenant) -> None:
    api = mor_tenant.client
    card = await mor_card(api, master=0)
    await approved_card_user(api)  # a user holding no card
    response = await api.get(f"{PREFIX}/cardholders")
    assert response.status_code == 200, response.text
    body = response.json()
    assert [h["UserId"] for h in body["Items"]] == [card["AssignedUserId"]]
    assert body["Items"][0]["CardCount"] == 1
    assert (body["Page"], body["HasMore"]) == (1, False)


async def test_cardholders_narrow_to_one_email(mor_tenant: Tenant) -> None:
    api = mor_tenant.client
    card = await mor_card(api, master=0)
    await mor_card(api, master=0)
    holder = await api.get(f"{PREFIX}/cardholders/{card['AssignedUserId']}")
    email = holder.json()["Email"]
    response = await api.get(f"{PREFIX}/cardholders", params={"email": email.upper()})
    assert [h["UserId"] for h in response.json()["Items"]] == [card["AssignedUserId"]]


async def test_a_cardholder_shows_the_cards_assigned_to_them(mor_tenant: Tenant) -> None:
    api = mor_tenant.client
    card = await mor_card(api, master=0)
    response = await api.get(f"{PREFIX}/cardholders/{card['AssignedUserId']}")
    assert response.status_code == 200, response.text
    assert [c["Id"] for c in response.json()["Cards"]] == [card["Id"]]
    assert response.json()["Cards"][0]["cardNo"] == ""


async def test_a_user_whose_card_was_unassigned_is_no_longer_a_cardholder(
    mor_tenant: Tenant,
) -> None:
    api = mor_tenant.client
    card = await mor_card(api, master=0)
    assert (await unassign(api, card["Id"])).status_code == 200
    response = await api.get(f"{PREFIX}/cardholders/{card['AssignedUserId']}")
    assert response.status_code == 404, response.text
    assert response.json()["Code"] == "MOR_CARDHOLDER_NOT_FOUND"
    assert (await api.get(f"{PREFIX}/cardholders")).json()["Items"] == []


async def test_another_companys_cardholder_is_not_found(
    mor_tenant: Tenant, make_tenant: TenantFactory
) -> None:
    other = await make_tenant("Other MOR", mor=True)
    card = await mor_card(other.client, master=0)
    response = await mor_tenant.client.get(f"{PREFIX}/cardholders/{card['AssignedUserId']}")
    assert response.status_code == 404, response.text


async def test_each_cardholder_counts_only_the_cards_assigned_to_them(
    mor_tenant: Tenant,
) -> None:
    api = mor_tenant.client
    first, second, third = [await mor_card(api, master=0) for _ in range(3)]
    holder = first["AssignedUserId"]
    assert (await unassign(api, second["Id"])).status_code == 200
    assert (await assign(api, second["Id"], holder)).status_code == 200
    response = await api.get(f"{PREFIX}/cardholders")
    assert response.status_code == 200, response.text
    counts = {h["UserId"]: h["CardCount"] for h in response.json()["Items"]}
    assert counts == {holder: 2, third["AssignedUserId"]: 1}
