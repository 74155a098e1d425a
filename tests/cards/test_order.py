"""Ordering a card: the spec's fields, the provider and tier rules, PENDING then produced."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import httpx
from fastapi import FastAPI

from finplat.cards import service
from finplat.cards.schemas import CardOrder
from finplat.idempotency.service import Claim
from tests.cards.steps import (
    ADDRESS,
    PHONE,
    approved_card_user,
    card_detail,
    card_type_id,
    deliver_callbacks,
    order,
    order_body,
    ordered_card,
)
from tests.conftest import Tenant
from tests.onboarding import create_user, select_tier, set_fault


async def test_order_answers_201_pending_with_the_spec_fields(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    body = await order_body(api, user, ExternalCardId="ext-1", CardName="Travel")
    response = await order(api, body)
    assert response.status_code == 201, response.text
    card = response.json()
    assert card["Status"] == "PENDING"
    assert card["UserId"] == user["Id"]
    assert card["ExternalCardId"] == "ext-1"
    assert card["Nickname"] == "Travel"
    assert card["CardType"] == "VIRTUAL"
    assert card["CardTypeId"] == body["CardTypeId"]
    assert card["Currency"] == "USD"
    assert card["AutoLockEnabled"] is False
    assert card["Provider"] == "cardprov"
    assert card["ProviderType"] == 1
    assert card["cardNo"] == ""
    assert card["cvv"] == "***"
    assert card["MaskedNumber"].startswith("424242******")
    assert card["MaskedNumber"].endswith(card["Last4"])
    for field in ("Id", "TierId", "CreatedAt"):
        assert card[field]


async def test_virtual_card_becomes_active_once_the_provider_reports_it(
    api: httpx.AsyncClient,
) -> None:
    user = await approved_card_user(api)
    card = await ordered_card(api, user, produced=False)
    assert card["Status"] == "PENDING"
    await deliver_callbacks(api, card)
    assert (await card_detail(api, card))["Status"] == "ACTIVE"


async def test_physical_card_waits_inactive_for_activation(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    card = await ordered_card(api, user, card_type="PHYSICAL")
    assert card["Status"] == "INACTIVE"
    assert card["DesignId"] == "classic"


async def test_same_idempotency_key_orders_one_card(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    body = await order_body(api, user)
    first = await order(api, body, key="order-once")
    second = await order(api, body, key="order-once")
    assert first.status_code == second.status_code == 201
    assert first.json()["Id"] == second.json()["Id"]
    cards = (await api.get("/api/v2/cards", params={"userId": user["Id"]})).json()["Cards"]
    assert len(cards) == 1


async def test_missing_or_invalid_user_card_type_or_phone_is_400(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    body = await order_body(api, user)
    for field in ("UserId", "CardTypeId", "Phone"):
        missing = {k: v for k, v in body.items() if k != field}
        assert (await order(api, missing)).status_code == 400, field
    for field, bad in (("UserId", "x"), ("CardTypeId", 0), ("Phone", "07911 123456")):
        assert (await order(api, {**body, field: bad})).status_code == 400, field


async def test_user_without_approved_kyc_is_refused(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    await select_tier(api, user["Id"], "Personal Premium")
    response = await order(api, await order_body(api, user))
    assert response.status_code == 409
    assert response.json()["Code"] == "KYC_NOT_APPROVED"


async def test_card_type_of_another_tier_is_refused(api: httpx.AsyncClient) -> None:
    premium = await approved_card_user(api)
    basic = await approved_card_user(api, "Personal Basic")
    body = await order_body(api, basic, UserId=basic["Id"])
    body["CardTypeId"] = await card_type_id(api, premium, "switchprov", "VIRTUAL")
    response = await order(api, body)
    assert response.status_code == 409
    assert response.json()["Code"] == "CARD_TYPE_NOT_IN_TIER"


async def test_unknown_card_type_is_404(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    response = await order(api, {**await order_body(api, user), "CardTypeId": 987654321})
    assert response.status_code == 404
    assert response.json()["Code"] == "CARD_TYPE_NOT_FOUND"


async def test_unknown_user_is_404(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    response = await order(api, {**await order_body(api, user), "UserId": 987654321})
    assert response.status_code == 404
    assert response.json()["Code"] == "USER_NOT_FOUND"


async def test_switch_provider_card_creates_the_switch_link(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    card = await ordered_card(api, user, provider="switchprov")
    assert card["Provider"] == "switchprov"
    assert card["ProviderType"] == 3
    assert card["MaskedNumber"].startswith("535353")
    report = (await api.get(f"/api/v2/users/{user['Id']}/kyc/detailed-status")).json()
    switch = next(p for p in report["Providers"] if p["Provider"] == "switchprov")
    assert switch["HasAccount"] is True


async def test_banking_provider_card_needs_a_budget(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api, bankprov=True)
    body = await order_body(api, user, "bankprov", BudgetId=...)
    response = await order(api, body)
    assert response.status_code == 409
    assert response.json()["Code"] == "CARD_BUDGET_REQUIRED"
    card = await ordered_card(api, user, "bankprov")
    assert card["Provider"] == "bankprov"
    assert card["ProviderType"] == 2
    assert card["BudgetId"]


async def test_budget_is_refused_for_card_provider_cards(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    response = await order(api, await order_body(api, user, BudgetId="bud_" + "0" * 24))
    assert response.status_code == 409
    assert response.json()["Code"] == "CARD_BUDGET_NOT_ALLOWED"


async def test_physical_card_needs_a_delivery_address_and_a_design(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    no_address = await order_body(api, user, card_type="PHYSICAL", DeliveryAddress=...)
    response = await order(api, no_address)
    assert response.status_code == 409
    assert response.json()["Code"] == "CARD_DELIVERY_ADDRESS_REQUIRED"
    no_design = await order_body(api, user, card_type="PHYSICAL", DesignId=...)
    response = await order(api, no_design)
    assert response.status_code == 409
    assert response.json()["Code"] == "CARD_DESIGN_REQUIRED"


async def test_incomplete_delivery_address_is_400(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    partial = {k: v for k, v in ADDRESS.items() if k != "PostalCode"}
    body = await order_body(api, user, card_type="PHYSICAL", DeliveryAddress=partial)
    assert (await order(api, body)).status_code == 400


async def test_virtual_card_takes_no_design(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    response = await order(api, await order_body(api, user, DesignId="midnight"))
    assert response.status_code == 409
    assert response.json()["Code"] == "CARD_DESIGN_NOT_OFFERED"


async def test_phone_is_normalised_e164(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    response = await order(api, await order_body(api, user, Phone=PHONE))
    assert response.status_code == 201


async def _order_directly(
    app: FastAPI, tenant: Tenant, body: dict[str, Any], claim: Claim
) -> service.CardView:
    async with app.state.session_factory() as session:
        view = await service.order(
            session,
            app.state.providers,
            claim=claim,
            company_id=tenant.company_id,
            body=CardOrder.model_validate(body),
        )
        await session.commit()
    return view


async def test_an_order_that_lost_its_lease_answers_the_card_its_retry_wrote(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    user = await approved_card_user(api)
    body = await order_body(api, user)
    claim = Claim(company_id=tenant.company_id, key="slow-order", token="")
    written = await _order_directly(app, tenant, body, claim)
    # The first request, its lease lost while the provider answered, comes back to write.
    late = await _order_directly(app, tenant, body, claim)
    assert late.card.id == written.card.id
    listed = await api.get("/api/v2/cards", params={"userId": user["Id"]})
    assert [c["Id"] for c in listed.json()["Cards"]] == [written.card.id]


async def test_a_resumed_order_finds_its_card_without_asking_the_provider_again(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    user = await approved_card_user(api)
    body = await order_body(api, user)
    claim = Claim(company_id=tenant.company_id, key="resumed-order", token="")
    written = await _order_directly(app, tenant, body, claim)
    await set_fault(api, "cardprov", "issue_card", "error")
    resumed = replace(claim, recovery_point="ordering")
    found = await _order_directly(app, tenant, body, resumed)
    assert found.card.id == written.card.id
