"""Steps for provider timeouts and cancellation: what the provider and the ledger hold."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import select, update

from finplat.cards.funding import service as funding
from finplat.cards.funding.models import CardFunding
from finplat.cards.models import Card
from finplat.cards.status import CardStatus
from finplat.events.envelope import data_of
from finplat.events.models import Event
from finplat.kit.clock import utcnow
from finplat.kit.money import from_minor
from finplat.ledger import service as ledger
from finplat.ledger.service import CompanyAccount
from tests.cards.funding.steps import active_card, set_fees, topup


async def cancel(api: httpx.AsyncClient, card: dict[str, Any]) -> httpx.Response:
    return await api.delete(f"/api/v2/cards/{card['Id']}", params={"userId": card["UserId"]})


async def holding_card(api: httpx.AsyncClient, value: float) -> dict[str, Any]:
    """A card holding `value` USD (no fees), the master account holding 1000 - `value`."""
    card = await active_card(api, master=1000.0)
    await set_fees(api, card)
    assert (await topup(api, card, value)).status_code == 200
    return card


async def deleted_events(app: FastAPI, card: dict[str, Any]) -> list[dict[str, Any]]:
    """The `data` of every `card.deleted` event recorded for the card."""
    async with app.state.session_factory() as session:
        rows = (await session.execute(select(Event).where(Event.type == "card.deleted"))).scalars()
        return [dict(data_of(e.body)) for e in rows if data_of(e.body)["cardId"] == card["Id"]]


async def clear_faults(api: httpx.AsyncClient) -> None:
    response = await api.delete("/api/v2/sandbox/faults")
    assert response.status_code == 200, response.text


async def master(api: httpx.AsyncClient) -> dict[str, Decimal]:
    """The USD master account: Posted, PendingDebits, Available."""
    response = await api.get("/api/v2/company/balances")
    assert response.status_code == 200, response.text
    usd = next(b for b in response.json()["Balances"] if b["Currency"] == "USD")
    return {k: Decimal(str(usd[k])) for k in ("Posted", "PendingDebits", "Available")}


async def provider_movements(api: httpx.AsyncClient, card: dict[str, Any]) -> list[Decimal]:
    """What the card provider moved onto (+) and off (-) the card, sorted by amount."""
    response = await api.get(
        f"/api/v2/cards/{card['Id']}/transactions",
        params={"userId": card["UserId"], "types": ["LOAD", "UNLOAD"]},
    )
    assert response.status_code == 200, response.text
    return sorted(
        Decimal(str(t["Amount"])) * (1 if t["Type"] == "LOAD" else -1)
        for t in response.json()["Items"]
    )


async def company_of(app: FastAPI, card: dict[str, Any]) -> int:
    async with app.state.session_factory() as session:
        found = await session.get(Card, card["Id"])
        assert found is not None
        return int(found.company_id)


async def fee_revenue(app: FastAPI, card: dict[str, Any]) -> Decimal:
    """The company's USD fee revenue (posted): not exposed over HTTP."""
    company_id = await company_of(app, card)
    async with app.state.session_factory() as session:
        account = await ledger.company_account(
            session, company_id=company_id, kind=CompanyAccount.FEE_REVENUE, currency="USD"
        )
        held = await ledger.balance(session, company_id=company_id, account_id=account.id)
    return from_minor(held.posted, "USD")


async def fundings(app: FastAPI, card: dict[str, Any]) -> list[CardFunding]:
    async with app.state.session_factory() as session:
        rows = await session.execute(
            select(CardFunding).where(CardFunding.card_id == card["Id"]).order_by(CardFunding.id)
        )
        return list(rows.scalars())


async def settle_pending(app: FastAPI, card: dict[str, Any]) -> None:
    """What reconciliation (or an operator) runs for fundings no request will retry."""
    company_id = await company_of(app, card)
    async with app.state.session_factory() as session:
        assert card["Id"] in await funding.cards_with_pending(session, company_id=company_id)
        await funding.settle_pending(
            session, app.state.providers, company_id=company_id, card_id=card["Id"]
        )
        await session.commit()


async def owe_decline_fee(app: FastAPI, card: dict[str, Any], fee_minor: int) -> None:
    """Put the card in the state an unpaid decline fee leaves it in (`SYSTEM_BLOCKED`, fee
    outstanding) while it holds money: a state the API cannot reach directly, since any
    top-up pays the fee first."""
    async with app.state.session_factory() as session:
        found = await session.get(Card, card["Id"])
        assert found is not None
        found.outstanding_fee_minor = fee_minor
        found.status = CardStatus.SYSTEM_BLOCKED
        await session.commit()


async def cards_with_pending(app: FastAPI, card: dict[str, Any]) -> list[int]:
    company_id = await company_of(app, card)
    async with app.state.session_factory() as session:
        return await funding.cards_with_pending(session, company_id=company_id)


async def another_caller_asks_the_provider(
    app: FastAPI, card: dict[str, Any], *, seconds: float = 60
) -> None:
    """Lease the provider call of the card's pending fundings, as a parallel request or
    settlement in the middle of its provider call holds it (negative `seconds`: a lease that
    lapsed, its holder gone)."""
    async with app.state.session_factory() as session, session.begin():
        await session.execute(
            update(CardFunding)
            .where(
                CardFunding.card_id == card["Id"],
                CardFunding.status == funding.FundingStatus.PENDING.value,
            )
            .values(provider_call_until=utcnow() + timedelta(seconds=seconds))
        )
