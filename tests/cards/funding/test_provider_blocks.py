"""Decline-fee blocks the card provider does not confirm: the decline and the fee owed stand,
and the background job repeats the block until the provider agrees with the local status
(`finplat.cards.funding.provider_blocks`)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
import structlog
from fastapi import FastAPI

from finplat import jobs
from finplat.cards.funding import provider_blocks
from finplat.cards.models import Card
from finplat.config import Settings
from finplat.kit.clock import utcnow
from finplat.providers.cards.port import CardAction, ProviderCardStatus
from finplat.providers.sandbox import delivery as sandbox_delivery
from finplat.providers.sandbox.models import SandboxCallback
from tests.cards.funding.steps import active_card, purchase, set_fees, topup
from tests.cards.steps import card_detail, control
from tests.onboarding import set_fault

ATTEMPTS = 3  # the test settings retry a technical failure twice


async def _blocked_for_a_fee(api: httpx.AsyncClient, mode: str | None) -> dict[str, Any]:
    """A card holding 5 USD declines a 50 USD purchase and owes a 6 USD decline fee, while
    the provider's block call fails (`transient`, every attempt), loses its answer
    (`timeout`) or, with no mode, succeeds."""
    card = await active_card(api, master=1000.0)
    await set_fees(api, card)
    assert (await topup(api, card, 5)).status_code == 200
    await set_fees(api, card, DeclineFee=6)
    if mode is not None:
        await set_fault(api, "cardprov", "change_status", mode, count=ATTEMPTS)
    declined = await purchase(api, card, 50)
    assert (declined["Status"], declined["DeclineFeeStatus"]) == ("DECLINED", "OUTSTANDING")
    assert declined["CardStatus"] == "SYSTEM_BLOCKED"
    return card


async def _local(app: FastAPI, card: dict[str, Any]) -> Card:
    async with app.state.session_factory() as session:
        found: Card | None = await session.get(Card, card["Id"])
        assert found is not None
        return found


async def _at_provider(app: FastAPI, card: dict[str, Any]) -> ProviderCardStatus:
    program = app.state.providers.card_programs["cardprov"]
    local = await _local(app, card)
    seen = await program.card(company_id=local.company_id, card_id=local.provider_card_id)
    return ProviderCardStatus(seen.status)


async def _confirm(app: FastAPI) -> int:
    return await provider_blocks.confirm_pending(app.state.session_factory, app.state.providers)


async def test_a_block_the_provider_refuses_to_answer_leaves_the_decline_and_the_fee_owed(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _blocked_for_a_fee(api, "transient")
    local = await _local(app, card)
    assert (local.status, local.outstanding_fee_minor) == ("SYSTEM_BLOCKED", 600)
    assert local.provider_block_pending
    assert await _at_provider(app, card) == ProviderCardStatus.ACTIVE


async def test_the_block_job_blocks_at_the_provider_a_card_blocked_here(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _blocked_for_a_fee(api, "transient")
    assert await _confirm(app) == 1
    assert await _at_provider(app, card) == ProviderCardStatus.BLOCKED
    assert not (await _local(app, card)).provider_block_pending
    assert (await purchase(api, card, 1))["DeclineReason"] == "SYSTEM_BLOCKED"
    assert await _confirm(app) == 0


async def test_a_block_whose_answer_was_lost_is_confirmed_by_the_job(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _blocked_for_a_fee(api, "timeout")
    assert (await _local(app, card)).provider_block_pending
    assert await _at_provider(app, card) == ProviderCardStatus.BLOCKED
    assert await _confirm(app) == 1
    assert not (await _local(app, card)).provider_block_pending


async def test_a_block_the_provider_confirms_leaves_nothing_for_the_job(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _blocked_for_a_fee(api, None)
    assert await _at_provider(app, card) == ProviderCardStatus.BLOCKED
    assert not (await _local(app, card)).provider_block_pending
    assert await _confirm(app) == 0


async def test_a_late_block_is_undone_when_the_fee_was_paid_first(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _blocked_for_a_fee(api, "transient")
    paid = await topup(api, card, 20)  # pays the fee and unblocks the card
    assert paid.status_code == 200, paid.text
    assert (await _local(app, card)).status == "ACTIVE"
    # The first block attempt lands at the provider only now.
    program = app.state.providers.card_programs["cardprov"]
    local = await _local(app, card)
    await program.change_status(
        company_id=local.company_id, card_id=local.provider_card_id, action=CardAction.BLOCK
    )
    assert await _confirm(app) == 1
    assert await _at_provider(app, card) == ProviderCardStatus.ACTIVE
    assert (await purchase(api, card, 1))["Approved"] is True


async def test_the_block_job_keeps_the_card_flagged_while_the_provider_fails(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _blocked_for_a_fee(api, "transient")
    await set_fault(api, "cardprov", "card", "transient", count=ATTEMPTS)
    with structlog.testing.capture_logs() as logs:
        assert await _confirm(app) == 0
    assert [e["code"] for e in logs if e["event"] == "card_block_deferred"] == [
        "PROVIDER_UNAVAILABLE"
    ]
    assert (await _local(app, card)).provider_block_pending
    assert await _confirm(app) == 1
    assert await _at_provider(app, card) == ProviderCardStatus.BLOCKED


async def test_the_background_jobs_repeat_an_unconfirmed_block(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _blocked_for_a_fee(api, "transient")
    stop = asyncio.Event()
    with structlog.testing.capture_logs() as logs:
        loop = asyncio.create_task(
            jobs._card_block_loop(app.state.session_factory, app.state.providers, stop)
        )
        for _ in range(500):
            if any(e["event"] == "card_blocks_settled" for e in logs):
                break
            await asyncio.sleep(0.01)
        stop.set()
        await asyncio.wait_for(loop, timeout=10)
    assert next(e for e in logs if e["event"] == "card_blocks_settled")["cards"] == 1
    assert await _at_provider(app, card) == ProviderCardStatus.BLOCKED


async def _owe_a_fee(app: FastAPI, card: dict[str, Any]) -> None:
    """What a purchase declined for a fee the card cannot pay leaves, committed before the
    provider is asked to block (`decline_fees.charge`)."""
    async with app.state.session_factory() as session, session.begin():
        row = await session.get(Card, card["Id"])
        assert row is not None
        row.status = "SYSTEM_BLOCKED"
        row.outstanding_fee_minor = 600
        row.provider_block_pending = True


async def test_a_decline_fee_block_that_lands_during_a_freeze_stands(
    api: httpx.AsyncClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    card = await active_card(api, master=1000.0)
    program = app.state.providers.card_programs["cardprov"]
    change_status = program.change_status

    async def block_lands_meanwhile(*, company_id: int, card_id: str, action: CardAction) -> Any:
        answer = await change_status(company_id=company_id, card_id=card_id, action=action)
        if action == CardAction.FREEZE:  # the freeze answered; the block comes before it lands
            await _owe_a_fee(app, card)
            await change_status(company_id=company_id, card_id=card_id, action=CardAction.BLOCK)
        return answer

    monkeypatch.setattr(program, "change_status", block_lands_meanwhile)
    assert (await control(api, card, "freeze")).status_code == 200
    local = await _local(app, card)
    assert (local.status, local.outstanding_fee_minor) == ("SYSTEM_BLOCKED", 600)
    assert local.provider_block_pending
    await _confirm(app)
    assert await _at_provider(app, card) == ProviderCardStatus.BLOCKED
    refused = await control(api, card, "enable")
    assert (refused.status_code, refused.json()["Code"]) == (409, "CARD_SYSTEM_BLOCKED")


async def test_a_status_the_provider_reports_does_not_lift_a_decline_fee_block(
    api: httpx.AsyncClient, app: FastAPI, settings: Settings
) -> None:
    card = await _blocked_for_a_fee(api, None)
    local = await _local(app, card)
    async with app.state.session_factory() as session, session.begin():
        session.add(
            SandboxCallback(
                provider="cardprov",
                event_id=f"cardprov_evt_reported_active_{local.id}",
                company_id=local.company_id,
                type="card.status_changed",
                payload=json.dumps({"cardId": local.provider_card_id, "status": "ACTIVE"}),
                created_at=utcnow(),
                due_at=utcnow(),
            )
        )
    factory = app.state.session_factory
    secret = settings.provider_callback_secret
    assert await sandbox_delivery.deliver_due(factory, secret=secret, company_id=local.company_id)
    reported = await _local(app, card)
    assert (reported.status, reported.outstanding_fee_minor) == ("SYSTEM_BLOCKED", 600)
    assert reported.provider_block_pending  # the job checks the provider again
    assert (await purchase(api, card, 1))["DeclineReason"] == "SYSTEM_BLOCKED"


async def test_a_late_freeze_answer_does_not_freeze_the_card_a_paid_fee_unblocked(
    api: httpx.AsyncClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The provider applies a freeze; before its answer lands here, a purchase it declines
    costs a decline fee the card cannot pay (blocked), and a top-up pays the fee (unblocked at
    the provider, so active there). The freeze's late answer is older than the unblock's."""
    card = await active_card(api, master=1000.0)
    await set_fees(api, card)
    assert (await topup(api, card, 5)).status_code == 200
    await set_fees(api, card, DeclineFee=6)
    program = app.state.providers.card_programs["cardprov"]
    change_status = program.change_status

    async def fee_owed_and_paid_meanwhile(
        *, company_id: int, card_id: str, action: CardAction
    ) -> Any:
        answer = await change_status(company_id=company_id, card_id=card_id, action=action)
        if action == CardAction.FREEZE:
            declined = await purchase(api, card, 50)
            assert (declined["DeclineFeeStatus"], declined["CardStatus"]) == (
                "OUTSTANDING",
                "SYSTEM_BLOCKED",
            )
            paid = await topup(api, card, 20)
            assert paid.status_code == 200, paid.text
        return answer

    monkeypatch.setattr(program, "change_status", fee_owed_and_paid_meanwhile)
    frozen = await control(api, card, "freeze")
    assert await _at_provider(app, card) == ProviderCardStatus.ACTIVE
    assert (await card_detail(api, card))["Status"] == "ACTIVE"
    assert frozen.status_code == 409, frozen.text  # overtaken by the unblock
    assert frozen.json()["Code"] == "CARD_CONTROL_SUPERSEDED"
