"""A card the provider cancels on its own (`card.status_changed` `CANCELLED`): the card is
cancelled, `card.deleted` says who cancelled it, and no money stays on it
(`finplat.cards.cancellation`)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import select

from finplat.cards.funding.service import FundingKind, FundingStatus
from finplat.cards.models import Card
from finplat.ledger.verification import verify
from finplat.reconciliation.cancelled_cards import CARD_CANCELLATION_RETURN
from finplat.reconciliation.service import reconcile
from tests.cards.funding.outcome_steps import (
    cancel,
    clear_faults,
    deleted_events,
    fee_revenue,
    fundings,
    holding_card,
    owe_decline_fee,
)
from tests.cards.funding.steps import (
    card_balance,
    master_available,
    purchase,
    set_fees,
    topup,
)
from tests.cards.steps import card_detail
from tests.conftest import Tenant
from tests.onboarding import set_fault


async def _provider_cancels(api: httpx.AsyncClient, card: dict[str, Any]) -> httpx.Response:
    return await api.post(
        f"/api/v2/sandbox/cards/{card['Id']}/provider-cancellation",
        params={"userId": card["UserId"]},
    )


async def _ledger_verifies(app: FastAPI) -> None:
    async with app.state.session_factory() as session:
        assert (await verify(session)).ok


async def test_a_card_the_provider_cancels_is_cancelled_with_card_deleted_from_the_provider(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await holding_card(api, 10)
    response = await _provider_cancels(api, card)
    assert response.status_code == 204, response.text
    assert (await card_detail(api, card))["Status"] == "CANCELLED"
    [event] = await deleted_events(app, card)
    assert (event["newStatus"], event["previousStatus"], event["cancelledBy"]) == (
        "CANCELLED",
        "ACTIVE",
        "PROVIDER",
    )


async def test_a_partners_cancellation_says_the_partner_cancelled(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await holding_card(api, 10)
    assert (await cancel(api, card)).status_code == 200
    [event] = await deleted_events(app, card)
    assert event["cancelledBy"] == "PARTNER"


async def test_what_a_provider_cancelled_card_held_returns_to_the_master_account_without_fee(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await holding_card(api, 100)
    await set_fees(api, card, UnloadFeePercentage=1)
    assert (await _provider_cancels(api, card)).status_code == 204
    assert await master_available(api) == Decimal("1000")
    assert await card_balance(api, card) == 0
    [returned] = [f for f in await fundings(app, card) if f.kind == FundingKind.UNLOAD]
    assert (returned.status, returned.amount_minor, returned.fee_minor) == (
        FundingStatus.COMPLETED,
        10000,
        0,
    )
    await _ledger_verifies(app)


async def test_a_provider_cancellation_pays_the_unpaid_decline_fee_first(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await holding_card(api, 10)
    await owe_decline_fee(app, card, 250)
    assert (await _provider_cancels(api, card)).status_code == 204
    assert await fee_revenue(app, card) == Decimal("2.5")
    assert await master_available(api) == Decimal("997.5")
    [event] = await deleted_events(app, card)
    assert (event["previousStatus"], event["declineFeeWrittenOff"]) == ("SYSTEM_BLOCKED", 0)


async def test_a_provider_cancellation_writes_off_the_fee_the_card_cannot_pay(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await holding_card(api, 5)
    await owe_decline_fee(app, card, 800)
    assert (await _provider_cancels(api, card)).status_code == 204
    assert await fee_revenue(app, card) == Decimal("5")
    assert await master_available(api) == Decimal("995")
    [event] = await deleted_events(app, card)
    assert event["declineFeeWrittenOff"] == 3
    await _ledger_verifies(app)


async def test_a_card_the_provider_cancelled_accepts_no_money(
    api: httpx.AsyncClient,
) -> None:
    card = await holding_card(api, 10)
    assert (await _provider_cancels(api, card)).status_code == 204
    refused = await topup(api, card, 10)
    assert (refused.status_code, refused.json()["Code"]) == (409, "CARD_CANCELLED")
    declined = await purchase(api, card, 1)
    assert (declined["Status"], declined["DeclineReason"]) == ("DECLINED", "CARD_CANCELLED")


async def test_the_provider_cannot_cancel_a_cancelled_card_again(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await holding_card(api, 10)
    assert (await _provider_cancels(api, card)).status_code == 204
    again = await _provider_cancels(api, card)
    assert (again.status_code, again.json()["Code"]) == (409, "CARD_CANCELLED")
    assert len(await deleted_events(app, card)) == 1


async def test_money_reaching_a_cancelled_card_later_is_booked_back_by_reconciliation(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    card = await holding_card(api, 10)
    # The provider loads 40 more, but its answer is lost: the top-up stays pending.
    await set_fault(api, "cardprov", "load", "timeout")
    assert (await topup(api, card, 40, key="lost-answer")).status_code == 503
    await clear_faults(api)
    assert (await _provider_cancels(api, card)).status_code == 204
    # What the card held is back; the top-up in flight decides the rest.
    assert await master_available(api) == Decimal("960")
    # The retry learns that the provider made the load before it cancelled the card.
    assert (await topup(api, card, 40, key="lost-answer")).status_code == 200
    assert await card_balance(api, card) == Decimal("40")
    report = await reconcile(
        app.state.session_factory, app.state.providers, company_id=tenant.company_id, checkers=[]
    )
    assert [s.type for s in report.settled] == [CARD_CANCELLATION_RETURN]
    assert await card_balance(api, card) == 0
    assert await master_available(api) == Decimal("1000")
    await _ledger_verifies(app)


async def test_a_top_up_reaching_a_card_the_provider_has_closed_is_refused_as_cancelled(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    card = await holding_card(api, 10)
    async with app.state.session_factory() as session:
        provider_card_id = (
            await session.execute(select(Card.provider_card_id).where(Card.id == card["Id"]))
        ).scalar_one()
    # The provider closes the card; its report has not reached the platform yet.
    await app.state.providers.card_programs["cardprov"].cancel_on_its_own(
        company_id=tenant.company_id, card_id=provider_card_id
    )
    refused = await topup(api, card, 5, key="after-the-provider-closed-it")
    assert (refused.status_code, refused.json()["Code"]) == (409, "CARD_CANCELLED")
    assert await master_available(api) == Decimal(990)
    await _ledger_verifies(app)
