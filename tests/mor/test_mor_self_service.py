"""What a simple user's bearer token opens: its own KYC link and its own cards, never
another user's."""

from __future__ import annotations

from typing import Any

import httpx

from tests.cards.steps import ordered_card
from tests.conftest import Tenant
from tests.mor.card_steps import assign, unassign
from tests.mor.identity_steps import ME, bearer, sign_in, simple_user
from tests.onboarding import decide, select_tier

KYC_URL = f"{ME}/kyc-url"
CARDS = f"{ME}/cards"
IDENTITY = {"DateOfBirth": "1990-05-17", "Country": "GB", "Occupation": "Engineer"}


async def test_a_simple_user_starts_its_own_hosted_kyc_with_its_birth_date_and_country(
    mor_tenant: Tenant,
) -> None:
    user = await simple_user(mor_tenant.client)
    token = await sign_in(mor_tenant.client, user["Email"])
    response = await mor_tenant.client.post(KYC_URL, headers=bearer(token), json=IDENTITY)
    assert response.status_code == 200, response.text
    assert response.json()["Url"]
    assert response.json()["Status"] == "PENDING"
    profile = (await mor_tenant.client.get(f"/api/v2/users/{user['Id']}")).json()
    assert profile["DateOfBirth"] == "1990-05-17"
    assert profile["Country"] == "GB"
    assert profile["KycStatus"] == "PENDING"


async def test_the_kyc_link_needs_a_bearer_token(mor_tenant: Tenant) -> None:
    response = await mor_tenant.client.post(KYC_URL, json=IDENTITY)
    assert response.status_code == 401


async def test_a_simple_user_reads_its_own_cards_and_never_another_users(
    mor_tenant: Tenant,
) -> None:
    api = mor_tenant.client
    holder = await simple_user(api)
    other = await simple_user(api)
    holder_token = await sign_in(api, holder["Email"])
    other_token = await sign_in(api, other["Email"])
    assert (await api.post(KYC_URL, headers=bearer(holder_token), json=IDENTITY)).is_success
    await decide(api, holder["Id"], "APPROVED")
    await select_tier(api, holder["Id"], "Personal Premium")
    card = await ordered_card(api, holder)
    own = await api.get(CARDS, headers=bearer(holder_token))
    assert own.status_code == 200, own.text
    assert [c["Id"] for c in own.json()["Cards"]] == [card["Id"]]
    others = await api.get(CARDS, headers=bearer(other_token))
    assert others.status_code == 200
    assert others.json()["Cards"] == []
    me = await api.get(ME, headers=bearer(other_token))
    assert me.json()["Id"] == other["Id"]


async def test_a_card_the_merchant_reassigns_leaves_the_holders_cards_for_the_assignees(
    mor_tenant: Tenant,
) -> None:
    api = mor_tenant.client
    tokens: dict[str, str] = {}
    users: dict[str, dict[str, Any]] = {}
    for who in ("holder", "assignee"):
        users[who] = await simple_user(api)
        tokens[who] = await sign_in(api, users[who]["Email"])
        assert (await api.post(KYC_URL, headers=bearer(tokens[who]), json=IDENTITY)).is_success
        await decide(api, users[who]["Id"], "APPROVED")
    await select_tier(api, users["holder"]["Id"], "Personal Premium")
    card = await ordered_card(api, users["holder"])
    assert (await unassign(api, card["Id"])).status_code == 200
    assert (await assign(api, card["Id"], users["assignee"]["Id"])).status_code == 200

    def ids(response: httpx.Response) -> list[int]:
        return [c["Id"] for c in response.json()["Cards"]]

    assert ids(await api.get(CARDS, headers=bearer(tokens["holder"]))) == []
    assert ids(await api.get(CARDS, headers=bearer(tokens["assignee"]))) == [card["Id"]]


LOADS = f"{ME}/load-requests"


async def _user_with_card(api: httpx.AsyncClient) -> tuple[str, dict[str, Any]]:
    """A signed-in simple user, KYC approved, holding a card: its token and the card."""
    user = await simple_user(api)
    token = await sign_in(api, user["Email"])
    assert (await api.post(KYC_URL, headers=bearer(token), json=IDENTITY)).is_success
    await decide(api, user["Id"], "APPROVED")
    await select_tier(api, user["Id"], "Personal Premium")
    return token, await ordered_card(api, user)


async def test_a_simple_user_asks_for_a_load_onto_its_own_card(mor_tenant: Tenant) -> None:
    api = mor_tenant.client
    token, card = await _user_with_card(api)
    asked = await api.post(LOADS, headers=bearer(token), json={"CardId": card["Id"], "Amount": 25})
    assert asked.status_code == 201, asked.text
    assert asked.json()["Status"] == "PENDING"
    listed = await api.get(LOADS, headers=bearer(token))
    assert [r["Id"] for r in listed.json()["Items"]] == [asked.json()["Id"]]
    merchant_view = await api.get(f"/api/v2/mor/public/load-requests/{asked.json()['Id']}")
    assert merchant_view.status_code == 200


async def test_a_simple_user_cannot_ask_for_a_load_onto_another_users_card(
    mor_tenant: Tenant,
) -> None:
    api = mor_tenant.client
    _, card = await _user_with_card(api)
    stranger = await simple_user(api)
    token = await sign_in(api, stranger["Email"])
    asked = await api.post(LOADS, headers=bearer(token), json={"CardId": card["Id"], "Amount": 25})
    assert asked.status_code == 409, asked.text
    assert asked.json()["Code"] == "MOR_CARD_NOT_ASSIGNED_TO_USER"
    assert (await api.get(LOADS, headers=bearer(token))).json()["Items"] == []


async def test_a_load_request_retried_with_its_key_is_made_once_and_keys_are_per_user(
    mor_tenant: Tenant,
) -> None:
    api = mor_tenant.client
    token, card = await _user_with_card(api)
    other_token, other_card = await _user_with_card(api)
    key = {"Idempotency-Key": "same-key-for-both"}
    first = await api.post(
        LOADS, headers={**bearer(token), **key}, json={"CardId": card["Id"], "Amount": 25}
    )
    again = await api.post(
        LOADS, headers={**bearer(token), **key}, json={"CardId": card["Id"], "Amount": 25}
    )
    assert first.status_code == again.status_code == 201
    assert again.json()["Id"] == first.json()["Id"]
    others = await api.post(
        LOADS,
        headers={**bearer(other_token), **key},
        json={"CardId": other_card["Id"], "Amount": 25},
    )
    assert others.status_code == 201, others.text
    assert others.json()["Id"] != first.json()["Id"]
    assert len((await api.get(LOADS, headers=bearer(token))).json()["Items"]) == 1
