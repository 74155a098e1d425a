"""A card provider's real-time authorization request, answered by the platform's decision."""

from __future__ import annotations

from decimal import Decimal

import httpx
from fastapi import FastAPI
from sqlalchemy import select, update

from finplat.cards.models import Card
from finplat.config import Settings
from tests.authorization.steps import max_amount_rule
from tests.cards.funding.steps import card_balance, topup
from tests.cards.transactions.steps import (
    ask_in_real_time,
    funded_card,
    provider_card_ref,
    purchase_event,
)
from tests.conftest import Tenant


def _request(
    company_id: int, card_ref: str, authorization_id: str, amount_minor: int
) -> dict[str, object]:
    """A real-time request for a USD purchase at one store."""
    return {
        "companyId": company_id,
        "authorizationId": authorization_id,
        "cardId": card_ref,
        "amountMinor": amount_minor,
        "currency": "USD",
        "merchant": "Network Store",
    }


async def test_an_approved_request_holds_once_even_with_its_authorization_event(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    tenant: Tenant,
) -> None:
    card = await funded_card(api)
    ref = await provider_card_ref(app, card)
    payload = {
        "companyId": tenant.company_id,
        "authorizationId": "net-rt-1",
        "cardId": ref,
        "amountMinor": 2000,
        "currency": "USD",
        "merchant": "Network Store",
        "mcc": "5411",
    }
    first = await ask_in_real_time(anonymous, settings.provider_callback_secret, payload)
    assert first.status_code == 200, first.text
    assert (first.json()["Approved"], first.json()["ResponseCode"]) == (True, "00")
    again = await ask_in_real_time(anonymous, settings.provider_callback_secret, payload)
    assert again.json() == first.json()
    reported = await anonymous.post(
        "/providers/cardprov/callbacks",
        **purchase_event(
            settings.provider_callback_secret,
            company_id=tenant.company_id,
            card_ref=ref,
            authorization_id="net-rt-1",
            type_="AUTHORIZATION",
            amount_minor=2000,
        ),
    )
    assert reported.status_code == 200, reported.text
    assert await card_balance(api, card) == Decimal(80)


async def test_a_request_beyond_the_balance_is_declined(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    tenant: Tenant,
) -> None:
    card = await funded_card(api, 10)
    answer = await ask_in_real_time(
        anonymous,
        settings.provider_callback_secret,
        _request(tenant.company_id, await provider_card_ref(app, card), "net-rt-2", 1001),
    )
    assert answer.status_code == 200, answer.text
    assert (answer.json()["Approved"], answer.json()["DeclineReason"]) == (
        False,
        "INSUFFICIENT_FUNDS",
    )


async def test_a_card_whose_account_is_not_linked_is_decided_on_the_account_it_gets(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    tenant: Tenant,
) -> None:
    card = await funded_card(api, 10)
    async with app.state.session_factory() as session:
        account_id = (
            await session.execute(select(Card.ledger_account_id).where(Card.id == card["Id"]))
        ).scalar_one()
        await session.execute(
            update(Card).where(Card.id == card["Id"]).values(ledger_account_id=None)
        )
        await session.commit()
    answer = await ask_in_real_time(
        anonymous,
        settings.provider_callback_secret,
        _request(tenant.company_id, await provider_card_ref(app, card), "net-rt-link", 400),
    )
    assert (answer.json()["Approved"], answer.json()["ApprovedAmountMinor"]) == (True, 400)
    async with app.state.session_factory() as session:
        linked = (
            await session.execute(select(Card.ledger_account_id).where(Card.id == card["Id"]))
        ).scalar_one()
    assert linked == account_id
    assert await card_balance(api, card) == Decimal(6)


async def test_a_request_beyond_the_balance_is_approved_for_what_is_available_if_partial(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    tenant: Tenant,
) -> None:
    card = await funded_card(api, 10)
    payload = {
        **_request(tenant.company_id, await provider_card_ref(app, card), "net-rt-part", 1500),
        "partialApproval": True,
    }
    answer = await ask_in_real_time(anonymous, settings.provider_callback_secret, payload)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["Approved"], body["ApprovedAmountMinor"], body["ResponseCode"]) == (
        True,
        1000,
        "10",
    )
    assert await card_balance(api, card) == Decimal(0)


async def test_a_declined_request_holds_nothing(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    tenant: Tenant,
) -> None:
    card = await funded_card(api, 10)
    answer = await ask_in_real_time(
        anonymous,
        settings.provider_callback_secret,
        _request(tenant.company_id, await provider_card_ref(app, card), "net-rt-none", 1001),
    )
    assert answer.json()["DeclineReason"] == "INSUFFICIENT_FUNDS"
    assert await card_balance(api, card) == Decimal(10)


async def test_a_repeated_request_answers_its_first_decline_even_once_funds_arrive(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    tenant: Tenant,
) -> None:
    card = await funded_card(api, 10)
    payload = _request(tenant.company_id, await provider_card_ref(app, card), "net-rt-9", 1500)
    first = await ask_in_real_time(anonymous, settings.provider_callback_secret, payload)
    assert first.json()["DeclineReason"] == "INSUFFICIENT_FUNDS"
    assert (await topup(api, card, 50)).status_code == 200
    again = await ask_in_real_time(anonymous, settings.provider_callback_secret, payload)
    assert again.json() == first.json()
    assert await card_balance(api, card) == Decimal(60)  # nothing held by the repeat


async def test_an_unsigned_request_is_401(anonymous: httpx.AsyncClient) -> None:
    response = await anonymous.post("/providers/cardprov/authorizations", json={})
    assert response.status_code == 401


async def test_a_request_for_an_unknown_card_is_404(
    anonymous: httpx.AsyncClient, settings: Settings, tenant: Tenant
) -> None:
    answer = await ask_in_real_time(
        anonymous,
        settings.provider_callback_secret,
        _request(tenant.company_id, "cardprov_card_nobody", "net-rt-3", 100),
    )
    assert answer.status_code == 404, answer.text


async def test_a_request_for_a_company_that_does_not_exist_is_404(
    api: httpx.AsyncClient, anonymous: httpx.AsyncClient, app: FastAPI, settings: Settings
) -> None:
    card = await funded_card(api)
    answer = await ask_in_real_time(
        anonymous,
        settings.provider_callback_secret,
        _request(10**12, await provider_card_ref(app, card), "net-rt-4", 100),
    )
    assert answer.status_code == 404, answer.text
    assert answer.json()["Code"] == "CARD_NOT_FOUND"


async def test_a_companys_active_rule_declines_a_real_time_request(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    tenant: Tenant,
) -> None:
    card = await funded_card(api)
    rule = await max_amount_rule(api, card, 5, ResponseCode="61")
    answer = await ask_in_real_time(
        anonymous,
        settings.provider_callback_secret,
        _request(tenant.company_id, await provider_card_ref(app, card), "net-rt-rule", 501),
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["Approved"], body["DeclineReason"], body["ResponseCode"]) == (
        False,
        "RULE_DECLINED",
        "61",
    )
    assert [f["RuleId"] for f in body["RulesFired"]] == [rule["RuleId"]]


async def test_a_deactivated_rule_no_longer_declines_a_real_time_request(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    tenant: Tenant,
) -> None:
    card = await funded_card(api)
    rule = await max_amount_rule(api, card, 5)
    patched = await api.patch(
        f"/api/v2/authorization/rules/{rule['RuleId']}", json={"Active": False}
    )
    assert patched.status_code == 200, patched.text
    answer = await ask_in_real_time(
        anonymous,
        settings.provider_callback_secret,
        _request(tenant.company_id, await provider_card_ref(app, card), "net-rt-off", 501),
    )
    assert answer.status_code == 200, answer.text
    assert (answer.json()["Approved"], answer.json()["RulesFired"]) == (True, [])
