"""Reconciliation settles card fundings a provider failure left pending, once they are older
than `SETTLE_AFTER` (a client's own retry with its key comes first)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import httpx
from fastapi import FastAPI

from finplat.kit.clock import set_clock, utcnow
from finplat.reconciliation.card_fundings import CARD_FUNDING, SETTLE_AFTER
from finplat.reconciliation.report import ReconciliationReport
from finplat.reconciliation.service import reconcile
from tests.cards.funding.outcome_steps import clear_faults, master
from tests.cards.funding.steps import active_card, card_balance, set_fees, topup
from tests.conftest import Tenant
from tests.onboarding import set_fault


async def _run(app: FastAPI, company_id: int) -> ReconciliationReport:
    return await reconcile(
        app.state.session_factory, app.state.providers, company_id=company_id, checkers=[]
    )


def _later() -> None:
    moment = utcnow() + SETTLE_AFTER + timedelta(seconds=1)
    set_clock(lambda: moment)


async def _timed_out_topup(api: httpx.AsyncClient, mode: str, count: int = 1) -> dict[str, object]:
    card = await active_card(api, master=1000.0)
    await set_fees(api, card)
    await set_fault(api, "cardprov", "load", mode, count=count)
    assert (await topup(api, card, 40)).status_code == 503  # no key: the client cannot retry
    return card


async def test_a_fresh_pending_topup_is_left_to_the_clients_retry(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    card = await _timed_out_topup(api, "timeout")
    report = await _run(app, tenant.company_id)
    assert [s for s in report.settled if s.type == CARD_FUNDING] == []
    assert await card_balance(api, card) == 0
    assert (await master(api))["PendingDebits"] == Decimal(40)


async def test_a_stale_topup_the_provider_made_is_posted(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    card = await _timed_out_topup(api, "timeout")
    _later()
    report = await _run(app, tenant.company_id)
    (settled,) = [s for s in report.settled if s.type == CARD_FUNDING]
    assert settled.status == "COMPLETED"
    assert await card_balance(api, card) == 40
    balances = await master(api)
    assert (balances["Posted"], balances["PendingDebits"]) == (Decimal(960), Decimal(0))


async def test_a_stale_topup_is_made_once_when_the_provider_never_got_it(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    card = await _timed_out_topup(api, "transient", count=3)
    _later()
    await _run(app, tenant.company_id)
    assert (await _run(app, tenant.company_id)).pending == []
    assert await card_balance(api, card) == 40
    assert (await master(api))["Posted"] == Decimal(960)


async def test_a_provider_still_down_keeps_the_topup_pending_with_the_reason(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    card = await _timed_out_topup(api, "transient", count=100)
    _later()
    report = await _run(app, tenant.company_id)
    (pending,) = [p for p in report.pending if p.type == CARD_FUNDING]
    assert pending.reason.startswith("settle failed: PROVIDER_")
    assert (await master(api))["PendingDebits"] == Decimal(40)
    await clear_faults(api)
    report = await _run(app, tenant.company_id)
    assert [s.status for s in report.settled if s.type == CARD_FUNDING] == ["COMPLETED"]
    assert await card_balance(api, card) == 40
