"""Reconciliation of card balances: each card's balance at its card programme against the
card's ledger account, with card movements in flight counted as the provider made them."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards.models import Card
from finplat.providers.cards.sandbox.models import SandboxCardprovCard
from finplat.reconciliation.card_balances import CardBalances
from finplat.reconciliation.report import ReconciliationReport
from finplat.reconciliation.service import reconcile
from tests.cards.funding.steps import (
    active_card,
    card_balance,
    purchase,
    set_fees,
    topup,
    unload,
)
from tests.conftest import Tenant
from tests.onboarding import set_fault


async def run(app: FastAPI, company_id: int | None) -> ReconciliationReport:
    return await reconcile(
        app.state.session_factory,
        app.state.providers,
        company_id=company_id,
        checkers=[CardBalances()],
    )


async def _provider_card_id(session: AsyncSession, card: dict[str, Any]) -> str:
    """The card's id at the provider, read in a transaction of its own: the test may call the
    provider next, and the sandbox refuses a call while a transaction is open."""
    ref = (
        await session.execute(select(Card.provider_card_id).where(Card.id == card["Id"]))
    ).scalar_one()
    await session.commit()
    assert ref is not None
    return str(ref)


async def _set_provider_balance(session: AsyncSession, card: dict[str, Any], minor: int) -> None:
    ref = await _provider_card_id(session, card)
    await session.execute(
        update(SandboxCardprovCard)
        .where(SandboxCardprovCard.card_id == ref)
        .values(balance_minor=minor)
    )
    await session.commit()


async def _funded_card(api: httpx.AsyncClient, value: float = 100) -> dict[str, Any]:
    card = await active_card(api, master=1000.0)
    await set_fees(api, card)
    assert (await topup(api, card, value)).status_code == 200
    return card


async def test_cards_after_topups_unloads_and_purchases_show_no_difference(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    card = await active_card(api, master=1000.0)
    await set_fees(
        api, card, TopupFeePercentage=1.5, TopupFixedFee=0.25, UnloadFixedFee=1, DeclineFee=0.5
    )
    assert (await topup(api, card, 100)).status_code == 200
    assert (await unload(api, card, 20)).status_code == 200
    assert (await purchase(api, card, 12.5))["Approved"] is True
    declined = await purchase(api, card, 9999)
    assert (declined["Status"], declined["DeclineFee"]) == ("DECLINED", 0.5)
    other = await _funded_card(api, 40)
    report = await run(app, None)
    assert tenant.company_id in report.companies
    assert report.balances_checked == 2
    assert report.differences == []
    assert report.unchecked == []
    assert report.ok
    assert await card_balance(api, card) == Decimal("65.25")  # 100 - 1.75 - 20 - 12.5 - 0.5
    assert await card_balance(api, other) == 40


async def test_a_tampered_card_balance_is_reported_for_that_card_only(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant, session: AsyncSession
) -> None:
    card = await _funded_card(api, 100)
    await _funded_card(api, 30)  # another card, untouched
    await _set_provider_balance(session, card, 9000)
    report = await run(app, tenant.company_id)
    assert not report.ok
    assert report.balances_checked == 2
    (difference,) = report.differences
    assert (difference.card_id, difference.user_id) == (card["Id"], card["UserId"])
    assert (difference.ledger_minor, difference.provider_minor) == (10000, 9000)
    rendered = json.loads(report.to_json(), parse_float=Decimal)
    assert rendered["balances"]["differences"] == [
        {
            "companyId": tenant.company_id,
            "userId": card["UserId"],
            "budgetId": None,
            "cardId": card["Id"],
            "currency": "USD",
            "ledger": Decimal("100.00"),
            "provider": Decimal("90.00"),
            "difference": Decimal("-10.00"),
            "source": "cardprov",
            "note": None,
        }
    ]
    assert f"card {card['Id']} USD: ledger 100.00, provider 90.00" in report.summary()


async def test_a_card_provider_outage_leaves_the_card_unchecked(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant, session: AsyncSession
) -> None:
    card = await _funded_card(api)
    await set_fault(api, "cardprov", "card", "transient", count=3)
    report = await run(app, tenant.company_id)
    assert not report.ok
    assert report.differences == []
    assert report.balances_checked == 0
    (unchecked,) = report.unchecked
    assert (unchecked.card_id, unchecked.user_id) == (card["Id"], card["UserId"])
    assert unchecked.source == "cardprov"
    assert unchecked.account_id == await _provider_card_id(session, card)
    assert unchecked.reason == "PROVIDER_UNAVAILABLE"
    rendered = json.loads(report.to_json())
    assert rendered["balances"]["unchecked"][0]["cardId"] == card["Id"]
    assert f"cardprov card {card['Id']} (1 balance(s)): PROVIDER_UNAVAILABLE" in report.summary()


async def test_a_topup_reserved_but_not_loaded_is_no_difference(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    card = await _funded_card(api, 50)
    await set_fault(api, "cardprov", "load", "transient", count=3)
    assert (await topup(api, card, 25, key="stuck-topup")).status_code == 503
    report = await run(app, tenant.company_id)
    assert report.differences == []
    assert report.ok
    # Settled later by the retry: still no difference.
    assert (await topup(api, card, 25, key="stuck-topup")).status_code == 200
    assert (await run(app, tenant.company_id)).differences == []
    assert await card_balance(api, card) == 75


async def test_a_topup_loaded_whose_answer_was_lost_is_no_difference(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    card = await _funded_card(api, 50)
    await set_fault(api, "cardprov", "load", "timeout")
    assert (await topup(api, card, 25, key="lost-topup")).status_code == 503
    assert await card_balance(api, card) == 50  # the load is still a pending credit
    report = await run(app, tenant.company_id)
    assert report.differences == []
    assert report.ok
    assert (await topup(api, card, 25, key="lost-topup")).status_code == 200
    assert (await run(app, tenant.company_id)).differences == []
    assert await card_balance(api, card) == 75


async def test_an_unload_reserved_but_not_made_is_no_difference(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    card = await _funded_card(api, 50)
    await set_fault(api, "cardprov", "unload", "transient", count=3)
    assert (await unload(api, card, 20, key="stuck-unload")).status_code == 503
    assert await card_balance(api, card) == 30  # reserved: out of the available balance
    report = await run(app, tenant.company_id)
    assert report.differences == []
    assert report.ok


async def test_a_difference_beside_a_movement_in_flight_says_so(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant, session: AsyncSession
) -> None:
    card = await _funded_card(api, 50)
    await set_fault(api, "cardprov", "unload", "transient", count=3)
    assert (await unload(api, card, 20, key="stuck-unload")).status_code == 503
    await _set_provider_balance(session, card, 4000)
    report = await run(app, tenant.company_id)
    (difference,) = report.differences
    # Expected: available 30 + the 20 the provider has not unloaded yet.
    assert (difference.ledger_minor, difference.provider_minor) == (5000, 4000)
    assert difference.note is not None
    assert "ledger available 30.00" in difference.note


async def test_a_purchase_hold_is_no_difference(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    """Between authorization and clearing: the provider has taken the amount off the card, the
    ledger holds it as a pending debit of the card."""
    card = await _funded_card(api, 50)
    held = await api.post(
        f"/api/v2/sandbox/cards/{card['Id']}/authorizations",
        params={"userId": card["UserId"]},
        json={"Amount": 12.5, "Currency": "USD", "Merchant": "Coffee Shop"},
    )
    assert held.status_code == 200, held.text
    assert held.json()["Approved"] is True
    assert (await run(app, tenant.company_id)).differences == []
    cleared = await api.post(
        f"/api/v2/sandbox/cards/{card['Id']}/authorizations/{held.json()['AuthorizationId']}/clear",
        params={"userId": card["UserId"]},
        json={"Amount": 10},
    )
    assert cleared.status_code == 200, cleared.text
    assert (await run(app, tenant.company_id)).differences == []
    assert await card_balance(api, card) == Decimal("40")


async def test_a_card_the_provider_no_longer_knows_is_a_difference(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant, session: AsyncSession
) -> None:
    card = await _funded_card(api, 10)
    ref = await _provider_card_id(session, card)
    await session.execute(
        update(SandboxCardprovCard).where(SandboxCardprovCard.card_id == ref).values(hidden=True)
    )
    await session.commit()
    (difference,) = (await run(app, tenant.company_id)).differences
    assert difference.card_id == card["Id"]
    assert (difference.ledger_minor, difference.provider_minor) == (1000, 0)
    assert difference.note == "the provider reports no such card"


async def test_a_cancelled_card_is_not_checked(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    card = await _funded_card(api, 10)
    response = await api.delete(f"/api/v2/cards/{card['Id']}", params={"userId": card["UserId"]})
    assert response.status_code == 200, response.text
    report = await run(app, tenant.company_id)
    assert report.balances_checked == 0
    assert report.ok
