"""A card's cancellation racing other requests on the card. No lock is held across a provider
call, so a top-up can complete while the cancellation's unload is on its way, or reach the
card while the provider is cancelling it, and parallel cancellations all reach the provider.
Whatever the order, the money ends in one place (the master account), each movement the
provider made stays booked, and `card.deleted` is sent once."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from finplat.ledger.verification import verify
from finplat.providers.cards.port import CardAction
from finplat.providers.cards.sandbox.adapter import SandboxCardProgram
from finplat.providers.cards.sandbox.models import SandboxCardprovCard
from finplat.reconciliation import service as reconciliation
from tests.cards.funding.outcome_steps import cancel, deleted_events
from tests.cards.funding.steps import (
    active_card,
    card_balance,
    master_available,
    set_fees,
    topup,
)
from tests.databases import backend
from tests.isolated import Isolated, isolated

SLOW_SECONDS = 0.5
LATER_SECONDS = 0.2  # the top-up starts while the cancellation waits for the provider


@pytest.fixture
def slow_unload_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The card provider makes an unload at once, but its answer is slow on the wire."""
    unload = SandboxCardProgram.unload

    async def slow_answer(self: SandboxCardProgram, **kwargs: Any) -> Any:
        answer = await unload(self, **kwargs)
        await asyncio.sleep(SLOW_SECONDS)
        return answer

    monkeypatch.setattr(SandboxCardProgram, "unload", slow_answer)


@pytest.fixture
def slow_cancel_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cancellation reaches the card provider only after a load has: on a busy machine a
    fixed delay let the cancellation win, and the test then checked another race."""
    change_status = SandboxCardProgram.change_status
    load = SandboxCardProgram.load
    loaded = asyncio.Event()

    async def slow_request(self: SandboxCardProgram, **kwargs: Any) -> Any:
        if kwargs["action"] is CardAction.CANCEL:
            await asyncio.wait_for(loaded.wait(), timeout=30)
        return await change_status(self, **kwargs)

    async def signalled_load(self: SandboxCardProgram, **kwargs: Any) -> Any:
        answer = await load(self, **kwargs)
        loaded.set()
        return answer

    monkeypatch.setattr(SandboxCardProgram, "change_status", slow_request)
    monkeypatch.setattr(SandboxCardProgram, "load", signalled_load)


async def _later(request: Awaitable[httpx.Response]) -> httpx.Response:
    await asyncio.sleep(LATER_SECONDS)
    return await request


async def _at_provider(env: Isolated) -> int:
    """What the card provider holds for the (only) card."""
    async with env.app.state.session_factory() as session:
        held = await session.execute(select(SandboxCardprovCard.balance_minor))
        return int(held.scalar_one())


async def _books_balance(env: Isolated) -> None:
    async with env.app.state.session_factory() as session:
        report = await verify(session)
    assert report.ok, report.summary()


@pytest.mark.usefixtures("slow_unload_answers")
async def test_a_cancellation_refused_for_a_top_up_completed_meanwhile_keeps_its_unload() -> None:
    async with isolated("cancelraces") as env:
        api = env.client
        card = await active_card(api, master=1000)
        await set_fees(api, card)
        assert (await topup(api, card, 100)).status_code == 200
        refused, topped = await asyncio.gather(
            cancel(api, card), _later(topup(api, card, 10, key="meanwhile"))
        )
        assert topped.status_code == 200, topped.text
        assert (refused.status_code, refused.json()["Code"]) == (409, "CARD_BALANCE_NOT_ZERO")
        # The 100 the provider unloaded are back in the master account; the 10 are on the card.
        assert await master_available(api) == Decimal(990)
        assert await card_balance(api, card) == Decimal(10)
        assert await _at_provider(env) == 1000
        again = await cancel(api, card)
        assert again.status_code == 200, again.text
        assert await master_available(api) == Decimal(1000)
        assert await _at_provider(env) == 0
        await _books_balance(env)


@pytest.mark.usefixtures("slow_cancel_requests")
async def test_a_top_up_reaching_the_card_while_it_is_cancelled_goes_back_to_the_master() -> None:
    async with isolated("cancelraces") as env:
        api = env.client
        card = await active_card(api, master=1000)
        await set_fees(api, card)
        cancelled, topped = await asyncio.gather(
            cancel(api, card), _later(topup(api, card, 10, key="meanwhile"))
        )
        assert cancelled.status_code == 200, cancelled.text
        assert topped.status_code == 200, topped.text
        # The provider returned the 10 to the programme with the card: the ledger books them
        # back to the master account (at once, or at the next reconciliation run).
        assert await _at_provider(env) == 0
        await reconciliation.reconcile(env.app.state.session_factory, env.app.state.providers)
        assert await master_available(api) == Decimal(1000)
        assert await card_balance(api, card) == 0
        await _books_balance(env)


@pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")
async def test_parallel_cancellations_send_one_card_deleted() -> None:
    async with isolated("cancelraces", database_pool_size=40, sandbox_latency_ms=20) as env:
        api = env.client
        card = await active_card(api, master=1000)
        await set_fees(api, card)
        assert (await topup(api, card, 100)).status_code == 200
        responses = await asyncio.gather(*(cancel(api, card) for _ in range(8)))
        outcomes = Counter((r.status_code, r.json().get("Code")) for r in responses)
        # Those that found the card open answer it cancelled, later ones find it cancelled;
        # one that finds another's unload in flight is told to try again.
        assert set(outcomes) <= {
            (200, None),
            (409, "CARD_CANCELLED"),
            (409, "CARD_BALANCE_NOT_ZERO"),
        }, outcomes
        assert outcomes[(200, None)] >= 1
        assert len(await deleted_events(env.app, card)) == 1
        assert await master_available(api) == Decimal(1000)
        assert await _at_provider(env) == 0
        await _books_balance(env)
