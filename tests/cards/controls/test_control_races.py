"""Card controls racing each other: the answers come back in another order than the provider
applied the controls (no lock is held across a provider call, so the local writes can swap).
The provider's answer time orders them, auto-lock settings included, and `CANCELLED` is
final. A control whose answer a later change overtook answers 409 `CARD_CONTROL_SUPERSEDED`
unless the card is as it asked all the same.

Each race is made deterministic: the provider applies the first control at once and holds its
answer back until the later request has finished."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from finplat.providers.cards.port import CardAction
from finplat.providers.cards.sandbox.adapter import SandboxCardProgram
from finplat.providers.cards.sandbox.models import SandboxCardprovCard
from tests.cards.funding.steps import active_card, purchase, set_fees, topup
from tests.cards.steps import card_detail, control, put_auto_lock
from tests.isolated import Isolated, isolated


@dataclass
class HeldAnswer:
    """The first matching provider call: applied at the provider, its answer held back."""

    applied: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)


Hold = Callable[[str, Callable[[dict[str, Any]], bool]], HeldAnswer]


@pytest.fixture
def hold_answer(monkeypatch: pytest.MonkeyPatch) -> Hold:
    """`hold_answer(operation, matches)`: the sandbox card provider applies the first call of
    `operation` whose arguments `matches`, then keeps its answer until the test releases it."""

    def hold(operation: str, matches: Callable[[dict[str, Any]], bool]) -> HeldAnswer:
        held = HeldAnswer()
        applying = getattr(SandboxCardProgram, operation)

        async def held_answer(self: SandboxCardProgram, **kwargs: Any) -> Any:
            answer = await applying(self, **kwargs)
            if matches(kwargs) and not held.applied.is_set():
                held.applied.set()
                await held.release.wait()
            return answer

        monkeypatch.setattr(SandboxCardProgram, operation, held_answer)
        return held

    return hold


def action(wanted: CardAction) -> Callable[[dict[str, Any]], bool]:
    return lambda call: call["action"] is wanted


def auto_lock(wanted: bool) -> Callable[[dict[str, Any]], bool]:
    return lambda call: call["enabled"] is wanted


async def overtaken(
    first: Awaitable[httpx.Response],
    held: HeldAnswer,
    later: Callable[[], Awaitable[httpx.Response]],
) -> tuple[httpx.Response, httpx.Response]:
    """`first` reaches the provider, and its answer is held back while `later` runs whole;
    both responses, in that order."""
    first_request = asyncio.ensure_future(first)
    applied = asyncio.ensure_future(held.applied.wait())
    await asyncio.wait({first_request, applied}, return_when=asyncio.FIRST_COMPLETED)
    applied.cancel()
    try:
        assert held.applied.is_set(), "the first request ended before the provider applied it"
        second = await later()
    finally:
        held.release.set()
    return await first_request, second


def superseded(response: httpx.Response) -> dict[str, Any]:
    """The 409 of an overtaken control; its `Details` (the card's state now)."""
    assert response.status_code == 409, response.text
    body = response.json()
    assert body["Code"] == "CARD_CONTROL_SUPERSEDED"
    assert "did not take effect" in body["Message"]
    return dict(json.loads(body["Details"]))


async def _at_provider(env: Isolated) -> str:
    async with env.app.state.session_factory() as session:
        return str((await session.execute(select(SandboxCardprovCard.status))).scalar_one())


async def _auto_lock_at_provider(env: Isolated) -> bool:
    async with env.app.state.session_factory() as session:
        return bool((await session.execute(select(SandboxCardprovCard.auto_lock))).scalar_one())


async def test_a_freeze_overtaken_by_a_later_enable_is_refused_and_the_card_stays_active(
    hold_answer: Hold,
) -> None:
    async with isolated("controls") as env:
        api = env.client
        card = await active_card(api, master=100)
        # With auto-lock on, enabling an active card asks the provider to unlock it.
        assert (await put_auto_lock(api, card, True)).status_code == 200
        held = hold_answer("change_status", action(CardAction.FREEZE))
        frozen, enabled = await overtaken(
            control(api, card, "freeze"), held, lambda: control(api, card, "enable")
        )
        assert enabled.status_code == 200, enabled.text
        assert superseded(frozen) == {"status": "ACTIVE", "autoLockEnabled": True}
        assert "the card is ACTIVE" in frozen.json()["Message"]
        assert await _at_provider(env) == "ACTIVE"  # the provider applied the enable last
        assert (await card_detail(api, card))["Status"] == "ACTIVE"


async def test_an_enable_overtaken_by_a_later_freeze_is_refused_and_the_card_stays_frozen(
    hold_answer: Hold,
) -> None:
    async with isolated("controls") as env:
        api = env.client
        card = await active_card(api, master=100)
        assert (await control(api, card, "freeze")).status_code == 200
        held = hold_answer("change_status", action(CardAction.UNFREEZE))
        enabled, frozen = await overtaken(
            control(api, card, "enable"), held, lambda: control(api, card, "freeze")
        )
        assert frozen.status_code == 200, frozen.text
        assert frozen.json()["Status"] == "FROZEN"
        assert superseded(enabled)["status"] == "FROZEN"
        assert await _at_provider(env) == "FROZEN"
        assert (await card_detail(api, card))["Status"] == "FROZEN"


async def test_an_enable_sent_while_a_freeze_is_on_its_way_overtakes_it(
    hold_answer: Hold,
) -> None:
    async with isolated("controls") as env:
        api = env.client
        card = await active_card(api, master=100)  # active, auto-lock off
        held = hold_answer("change_status", action(CardAction.FREEZE))
        frozen, enabled = await overtaken(
            control(api, card, "freeze"), held, lambda: control(api, card, "enable")
        )
        assert enabled.status_code == 200, enabled.text
        assert superseded(frozen)["status"] == "ACTIVE"
        assert await _at_provider(env) == "ACTIVE"
        assert (await card_detail(api, card))["Status"] == "ACTIVE"


async def test_a_freeze_overtaken_by_a_change_that_left_the_card_frozen_answers_200(
    hold_answer: Hold,
) -> None:
    async with isolated("controls") as env:
        api = env.client
        card = await active_card(api, master=100)
        held = hold_answer("change_status", action(CardAction.FREEZE))
        frozen, locked = await overtaken(
            control(api, card, "freeze"), held, lambda: put_auto_lock(api, card, True)
        )
        assert locked.status_code == 200, locked.text
        assert frozen.status_code == 200, frozen.text
        assert frozen.json()["Status"] == "FROZEN"
        assert (await card_detail(api, card))["Status"] == "FROZEN"


async def test_a_freeze_answered_after_a_cancellation_does_not_bring_the_card_back(
    hold_answer: Hold,
) -> None:
    async with isolated("controls") as env:
        api = env.client
        card = await active_card(api, master=100)
        params = {"userId": card["UserId"]}
        held = hold_answer("change_status", action(CardAction.FREEZE))
        frozen, cancelled = await overtaken(
            control(api, card, "freeze"),
            held,
            lambda: api.delete(f"/api/v2/cards/{card['Id']}", params=params),
        )
        assert cancelled.status_code == 200, cancelled.text
        assert frozen.status_code == 200, frozen.text
        assert frozen.json()["Status"] == "CANCELLED"
        assert (await card_detail(api, card))["Status"] == "CANCELLED"


async def test_an_auto_lock_setting_overtaken_by_a_later_one_is_refused(
    hold_answer: Hold,
) -> None:
    async with isolated("controls") as env:
        api = env.client
        card = await active_card(api, master=100)
        held = hold_answer("set_auto_lock", auto_lock(True))
        on, off = await overtaken(
            put_auto_lock(api, card, True), held, lambda: put_auto_lock(api, card, False)
        )
        assert off.status_code == 200, off.text
        assert superseded(on) == {"status": "ACTIVE", "autoLockEnabled": False}
        assert "auto-lock is off" in on.json()["Message"]
        assert await _auto_lock_at_provider(env) is False  # the provider applied the off last
        assert (await card_detail(api, card))["AutoLockEnabled"] is False


async def test_after_an_overtaken_auto_lock_off_enable_still_unlocks_a_locked_card(
    hold_answer: Hold,
) -> None:
    async with isolated("controls") as env:
        api = env.client
        card = await active_card(api, master=100)
        await set_fees(api, card)
        assert (await topup(api, card, 50)).status_code == 200
        assert (await put_auto_lock(api, card, True)).status_code == 200
        held = hold_answer("set_auto_lock", auto_lock(False))
        off, on = await overtaken(
            put_auto_lock(api, card, False), held, lambda: put_auto_lock(api, card, True)
        )
        assert on.status_code == 200, on.text
        assert superseded(off)["autoLockEnabled"] is True
        assert (await card_detail(api, card))["AutoLockEnabled"] is True
        assert (await purchase(api, card, 5))["Approved"] is True
        assert (await purchase(api, card, 5))["DeclineReason"] == "CARD_AUTO_LOCKED"
        # The card knows auto-lock is on, so enable asks the provider to unlock it.
        assert (await control(api, card, "enable")).status_code == 200
        assert (await purchase(api, card, 5))["Approved"] is True
