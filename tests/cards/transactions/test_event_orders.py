"""Property: whatever order the network delivers a purchase's events in, with duplicates, the
card's ledger account ends at what the events' totals say, and the ledger verifies."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from finplat.cards.funding import service as funding
from finplat.cards.models import Card
from finplat.cards.transactions.purchase import EventType, hold_due
from finplat.config import Settings
from finplat.db.tenancy import bind_company
from finplat.ledger import service as ledger
from finplat.ledger.verification import verify
from finplat.providers.names import ExternalProvider
from tests.callbacks import received
from tests.cards.transactions.steps import funded_card, provider_card_ref, purchase_event
from tests.conftest import Tenant


@dataclass
class Totals:
    authorized_minor: int = 0
    incremented_minor: int = 0
    reversed_minor: int = 0
    cleared_minor: int = 0
    refunded_minor: int = 0
    declined: bool = False
    expired: bool = False


amounts = st.integers(min_value=1, max_value=6000)
purchases = st.fixed_dictionaries(
    {
        "AUTHORIZATION": amounts,
        "INCREMENTAL": st.none() | amounts,
        "REVERSAL": st.none() | amounts,
        "CLEARING": st.none() | amounts,
        "REFUND": st.none() | amounts,
        "EXPIRY": st.booleans(),
    }
)


def _events(purchase: dict[str, Any]) -> list[tuple[str, int]]:
    events = []
    for type_, value in purchase.items():
        if value is None or value is False:
            continue
        events.append((type_, 0 if value is True else int(value)))
    return events


def _expected(events: list[tuple[str, int]]) -> tuple[Totals, int]:
    t, paid = Totals(), 0
    for type_, amount in events:
        match EventType(type_):
            case EventType.AUTHORIZATION:
                t.authorized_minor = amount
            case EventType.INCREMENTAL:
                t.incremented_minor += amount
            case EventType.REVERSAL:
                t.reversed_minor += amount
            case EventType.CLEARING:
                t.cleared_minor += amount
                paid += amount
            case EventType.REFUND:
                t.refunded_minor += amount
                paid -= amount
            case EventType.EXPIRY:
                t.expired = True
            case EventType.DECLINE:
                t.declined = True
    return t, paid


@pytest.fixture
def world() -> dict[str, Any]:
    return {}


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    batch=st.lists(purchases, min_size=1, max_size=3),
    order=st.randoms(use_true_random=False),
    repeats=st.lists(st.integers(min_value=0, max_value=20), max_size=4),
)
async def test_any_order_of_purchase_events_settles_the_ledger_to_their_totals(
    api: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    tenant: Tenant,
    world: dict[str, Any],
    batch: list[dict[str, Any]],
    order: Any,
    repeats: list[int],
) -> None:
    if not world:
        card = await funded_card(api, 1000)
        world.update(card=card, ref=await provider_card_ref(app, card))
    factory, secret = app.state.session_factory, settings.provider_callback_secret
    before = await _card_balance(factory, tenant.company_id, world["card"]["Id"])
    deliveries: list[tuple[str, str, str, int]] = []
    paid_total = held_total = 0
    for purchase in batch:
        authorization_id = f"net-{uuid.uuid4().hex[:12]}"
        events = _events(purchase)
        totals, paid = _expected(events)
        paid_total += paid
        held_total += hold_due(totals)
        deliveries += [(authorization_id, f"txn-{uuid.uuid4().hex}", t, a) for t, a in events]
    order.shuffle(deliveries)
    # Duplicates: some events again, under their own provider event id.
    deliveries += [deliveries[i % len(deliveries)] for i in repeats]
    for authorization_id, transaction_id, type_, amount in deliveries:
        sent = purchase_event(
            secret,
            company_id=tenant.company_id,
            card_ref=world["ref"],
            authorization_id=authorization_id,
            type_=type_,
            amount_minor=amount,
            transaction_id=transaction_id,
        )
        await received(factory, secret, sent["content"], provider=ExternalProvider.CARDPROV)
    after = await _card_balance(factory, tenant.company_id, world["card"]["Id"])
    assert (after.posted - before.posted, after.pending_debits - before.pending_debits) == (
        -paid_total,
        held_total,
    )
    async with factory() as session:
        report = await verify(session)
    assert report.ok, report.summary()


async def _card_balance(factory: Any, company_id: int, card_id: int) -> ledger.Balance:
    async with factory() as session:
        bind_company(session, company_id)
        card = await session.get(Card, card_id)
        assert card is not None
        account = await funding.card_account(session, card)
        return await ledger.balance(session, company_id=company_id, account_id=account.id)
