"""Card controls: freeze, enable (refused while system-blocked), activate, PIN rules,
auto-lock, cancellation and its `card.deleted` event; a cancelled card accepts nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select, update

from finplat.cards.models import Card
from finplat.events.models import Event
from tests.cards.steps import approved_card_user, card_detail, control, ordered_card


async def test_freeze_then_enable(api: httpx.AsyncClient) -> None:
    card = await ordered_card(api, await approved_card_user(api))
    frozen = await control(api, card, "freeze")
    assert frozen.status_code == 200, frozen.text
    assert frozen.json()["Status"] == "FROZEN"
    enabled = await control(api, card, "enable")
    assert enabled.status_code == 200, enabled.text
    assert enabled.json()["Status"] == "ACTIVE"


@pytest.mark.parametrize("provider", ["switchprov", "bankprov"])
async def test_freeze_works_for_every_provider(api: httpx.AsyncClient, provider: str) -> None:
    user = await approved_card_user(api, bankprov=provider == "bankprov")
    card = await ordered_card(api, user, provider)
    response = await control(api, card, "freeze")
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "FROZEN"


async def _system_block(app: FastAPI, card_id: int, fee_minor: int) -> None:
    async with app.state.session_factory() as session:
        await session.execute(
            update(Card)
            .where(Card.id == card_id)
            .values(status="SYSTEM_BLOCKED", outstanding_fee_minor=fee_minor)
        )
        await session.commit()


async def test_enable_is_refused_while_a_decline_fee_is_unpaid(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await ordered_card(api, await approved_card_user(api))
    await _system_block(app, card["Id"], 150)
    response = await control(api, card, "enable")
    assert response.status_code == 409
    assert response.json()["Code"] == "CARD_SYSTEM_BLOCKED"
    assert (await card_detail(api, card))["Status"] == "SYSTEM_BLOCKED"


async def test_activate_a_delivered_physical_card(api: httpx.AsyncClient) -> None:
    card = await ordered_card(api, await approved_card_user(api), card_type="PHYSICAL")
    response = await control(api, card, "activate")
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "ACTIVE"


async def test_virtual_card_cannot_be_activated(api: httpx.AsyncClient) -> None:
    card = await ordered_card(api, await approved_card_user(api))
    response = await control(api, card, "activate")
    assert response.status_code == 409
    assert response.json()["Code"] == "CARD_STATE_CONFLICT"


async def test_pending_card_cannot_be_frozen(api: httpx.AsyncClient) -> None:
    card = await ordered_card(api, await approved_card_user(api), produced=False)
    response = await control(api, card, "freeze")
    assert response.status_code == 409


async def test_pin_is_set_and_never_echoed(api: httpx.AsyncClient) -> None:
    card = await ordered_card(api, await approved_card_user(api))
    response = await control(api, card, "pin", Pin="480273")
    assert response.status_code == 200, response.text
    assert response.json() == {"CardId": card["Id"], "PinSet": True}
    assert "480273" not in response.text
    assert (await card_detail(api, card))["PinSet"] is True


@pytest.mark.parametrize("pin", ["000000", "777777", "123456", "654321", "345678", "987654"])
async def test_simple_pins_are_refused(api: httpx.AsyncClient, pin: str) -> None:
    card = await ordered_card(api, await approved_card_user(api))
    response = await control(api, card, "pin", Pin=pin)
    assert response.status_code == 409
    assert response.json()["Code"] == "CARD_PIN_TOO_SIMPLE"


@pytest.mark.parametrize("pin", ["12345", "1234567", "12a456", ""])
async def test_pin_must_be_six_digits(api: httpx.AsyncClient, pin: str) -> None:
    card = await ordered_card(api, await approved_card_user(api))
    assert (await control(api, card, "pin", Pin=pin)).status_code == 400


async def test_auto_lock_put_enable_disable(api: httpx.AsyncClient) -> None:
    card = await ordered_card(api, await approved_card_user(api))
    params = {"userId": card["UserId"]}
    put = await api.put(
        f"/api/v2/cards/{card['Id']}/auto-lock", params=params, json={"enabled": True}
    )
    assert put.status_code == 200, put.text
    body = put.json()
    assert body["CardId"] == card["Id"]
    assert body["AutoLockEnabled"] is True
    assert body["Status"] == "ACTIVE"
    assert body["UpdatedAt"]
    off = await api.post(f"/api/v2/cards/{card['Id']}/auto-lock/disable", params=params)
    assert off.json()["AutoLockEnabled"] is False
    on = await api.post(f"/api/v2/cards/{card['Id']}/auto-lock/enable", params=params)
    assert on.json()["AutoLockEnabled"] is True
    assert (await card_detail(api, card))["AutoLockEnabled"] is True


async def test_cancel_emits_card_deleted(api: httpx.AsyncClient, app: FastAPI) -> None:
    card = await ordered_card(api, await approved_card_user(api))
    response = await api.delete(f"/api/v2/cards/{card['Id']}", params={"userId": card["UserId"]})
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "CANCELLED"
    assert response.json()["CancelledAt"]
    async with app.state.session_factory() as session:
        events = list(
            (await session.execute(select(Event).where(Event.type == "card.deleted"))).scalars()
        )
    bodies = [e for e in events if f'"cardId":{card["Id"]}' in _body(e)]
    assert len(bodies) == 1
    assert '"newStatus":"CANCELLED"' in _body(bodies[0])
    assert bodies[0].domain == "card"


def _body(event: Event) -> str:
    return event.body.replace(" ", "")


@pytest.mark.parametrize("provider", ["switchprov", "bankprov"])
async def test_only_card_provider_cards_can_be_cancelled(
    api: httpx.AsyncClient, provider: str
) -> None:
    user = await approved_card_user(api, bankprov=provider == "bankprov")
    card = await ordered_card(api, user, provider)
    response = await api.delete(f"/api/v2/cards/{card['Id']}", params={"userId": user["Id"]})
    assert response.status_code == 409
    assert response.json()["Code"] == "CARD_CANCELLATION_NOT_SUPPORTED"


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "freeze", None),
        ("POST", "enable", None),
        ("POST", "pin", {"Pin": "480273"}),
        ("POST", "auto-lock/enable", None),
        ("PUT", "auto-lock", {"enabled": False}),
        ("GET", "widget", None),
        ("DELETE", "", None),
    ],
)
async def test_cancelled_card_accepts_nothing(
    api: httpx.AsyncClient, method: str, path: str, body: dict[str, Any] | None
) -> None:
    card = await ordered_card(api, await approved_card_user(api))
    params = {"userId": card["UserId"]}
    assert (await api.delete(f"/api/v2/cards/{card['Id']}", params=params)).status_code == 200
    url = f"/api/v2/cards/{card['Id']}" + (f"/{path}" if path else "")
    response = await api.request(method, url, params=params, json=body)
    assert response.status_code == 409
    assert response.json()["Code"] == "CARD_CANCELLED"
