"""Reading cards: masked details only, balances, 404/401, cancelled and omitted cards,
transactions with parsed provider timestamps."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI

from finplat.providers.registry import Providers
from tests.cards.steps import approved_card_user, card_detail, ordered_card
from tests.onboarding import set_fault


async def test_detail_is_sanitized_with_balances(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    card = await ordered_card(api, user)
    assert card["cardNo"] == ""
    assert card["cvv"] == "***"
    masked = card["MaskedNumber"]
    assert len(masked.replace("*", "")) <= 10
    assert card["AvailableBalance"] == 0
    assert card["PostedBalance"] == 0
    assert card["Status"] == "ACTIVE"


async def test_missing_user_or_card_is_404(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    card = await ordered_card(api, user)
    missing_card = await api.get("/api/v2/cards/987654321", params={"userId": user["Id"]})
    assert missing_card.status_code == 404
    assert missing_card.json()["Code"] == "CARD_NOT_FOUND"
    missing_user = await api.get(f"/api/v2/cards/{card['Id']}", params={"userId": 987654321})
    assert missing_user.status_code == 404


async def test_card_of_another_users_is_404(api: httpx.AsyncClient) -> None:
    owner = await approved_card_user(api)
    other = await approved_card_user(api)
    card = await ordered_card(api, owner)
    response = await api.get(f"/api/v2/cards/{card['Id']}", params={"userId": other["Id"]})
    assert response.status_code == 404


async def test_user_of_another_company_is_401(api: httpx.AsyncClient, make_tenant: Any) -> None:
    user = await approved_card_user(api)
    card = await ordered_card(api, user)
    other = await make_tenant()
    response = await other.client.get(f"/api/v2/cards/{card['Id']}", params={"userId": user["Id"]})
    assert response.status_code == 401
    assert response.json()["Code"] == "USER_OUTSIDE_COMPANY"
    assert str(card["Last4"]) not in response.text


async def test_cancelled_card_keeps_its_local_details(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    card = await ordered_card(api, user)
    response = await api.delete(f"/api/v2/cards/{card['Id']}", params={"userId": user["Id"]})
    assert response.status_code == 200, response.text
    detail = await card_detail(api, card)
    assert detail["Status"] == "CANCELLED"
    assert detail["MaskedNumber"] == card["MaskedNumber"]
    listed = (await api.get("/api/v2/cards", params={"userId": user["Id"]})).json()["Cards"]
    assert [c["Status"] for c in listed] == ["CANCELLED"]


async def test_listing_keeps_banking_provider_cards_the_provider_omits(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    user = await approved_card_user(api, bankprov=True)
    card = await ordered_card(api, user, "bankprov")
    # The provider stops listing the card (as the real one does at times).
    providers: Providers = app.state.providers
    program: Any = providers.card_programs["bankprov"]
    from sqlalchemy import update

    from finplat.db.unit_of_work import unit_of_work
    from finplat.providers.cards.sandbox.models import SandboxCardprovCard

    async with unit_of_work(program.factory) as session:
        await session.execute(
            update(SandboxCardprovCard)
            .where(SandboxCardprovCard.card_id.like("bankprov_card_%"))
            .values(hidden=True)
        )
    listed = (await api.get("/api/v2/cards", params={"userId": user["Id"]})).json()["Cards"]
    assert [c["Id"] for c in listed] == [card["Id"]]
    assert listed[0]["Status"] == "ACTIVE"
    assert listed[0]["CreatedAt"] == card["CreatedAt"]
    assert listed[0]["AvailableBalance"] == 0


async def test_listing_of_unknown_user_is_404(api: httpx.AsyncClient) -> None:
    response = await api.get("/api/v2/cards", params={"userId": 987654321})
    assert response.status_code == 404


async def test_transactions_have_parsed_or_null_timestamps(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    user = await approved_card_user(api)
    card = await ordered_card(api, user)
    detail = await card_detail(api, card)
    providers: Providers = app.state.providers
    program: Any = providers.card_programs["cardprov"]
    ref = await _provider_ref(app, card["Id"])
    company_id = await _company_of(app, card["Id"])
    await program.load(
        company_id=company_id, card_id=ref, idempotency_key="t-load", amount_minor=1000
    )
    await program.authorize(
        company_id=company_id,
        card_id=ref,
        authorization_id="auth-cafe",
        amount_minor=400,
        currency="USD",
        merchant="Cafe",
    )
    await program.purchase_event(
        company_id=company_id,
        card_id=ref,
        authorization_id="auth-cafe",
        type_="CLEARING",
        amount_minor=None,
    )
    await program.authorize(
        company_id=company_id,
        card_id=ref,
        authorization_id="auth-cars",
        amount_minor=99999,
        currency="USD",
        merchant="Cars",
    )
    response = await api.get(
        f"/api/v2/cards/{detail['Id']}/transactions", params={"userId": user["Id"]}
    )
    assert response.status_code == 200, response.text
    items = response.json()["Items"]
    by_type = {t["Type"]: t for t in items}
    assert set(by_type) == {"LOAD", "AUTHORIZATION", "CLEARING", "DECLINE"}
    assert by_type["LOAD"]["OccurredAt"] is not None  # ISO 8601
    assert by_type["CLEARING"]["OccurredAt"] is not None  # Unix milliseconds
    assert by_type["CLEARING"]["OccurredAt"][:4] == by_type["LOAD"]["OccurredAt"][:4]
    assert by_type["DECLINE"]["OccurredAt"] is None  # none sent
    assert by_type["DECLINE"]["DeclineReason"] == "INSUFFICIENT_FUNDS"
    filtered = await api.get(
        f"/api/v2/cards/{detail['Id']}/transactions",
        params={"userId": user["Id"], "types": "DECLINE"},
    )
    assert [t["Type"] for t in filtered.json()["Items"]] == ["DECLINE"]
    settled = await api.get(
        f"/api/v2/cards/{detail['Id']}/transactions",
        params={"userId": user["Id"], "statuses": "SETTLED", "pageSize": 1},
    )
    page = settled.json()
    assert len(page["Items"]) == 1
    assert page["HasMore"] is True


async def _provider_ref(app: FastAPI, card_id: int) -> str:
    from finplat.cards.models import Card

    async with app.state.session_factory() as session:
        card = await session.get(Card, card_id)
        assert card is not None
        assert card.provider_card_id is not None
        return str(card.provider_card_id)


async def _company_of(app: FastAPI, card_id: int) -> int:
    from finplat.cards.models import Card

    async with app.state.session_factory() as session:
        card = await session.get(Card, card_id)
        assert card is not None
        return int(card.company_id)


async def _listed_statuses(api: httpx.AsyncClient, user: dict[str, Any]) -> list[str]:
    response = await api.get("/api/v2/cards", params={"userId": user["Id"]})
    assert response.status_code == 200, response.text
    return [c["Status"] for c in response.json()["Cards"]]


async def test_listing_cards_with_nothing_to_learn_does_not_ask_the_provider(
    api: httpx.AsyncClient,
) -> None:
    user = await approved_card_user(api)
    await ordered_card(api, user)
    await set_fault(api, "cardprov", "list_cards", "error")
    # Produced, with its ledger account: the listing is the platform's own.
    assert await _listed_statuses(api, user) == ["ACTIVE"]


async def test_listing_a_card_awaiting_production_asks_the_provider_for_its_status(
    api: httpx.AsyncClient,
) -> None:
    user = await approved_card_user(api)
    await ordered_card(api, user, produced=False)
    # The provider has produced it; its callback has not arrived yet.
    assert await _listed_statuses(api, user) == ["ACTIVE"]
