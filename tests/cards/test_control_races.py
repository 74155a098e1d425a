"""Card controls racing each other: the answers come back in another order than the provider
applied the controls (no lock is held across a provider call, so the local writes can swap).
The provider's answer time orders them, auto-lock settings included, and `CANCELLED` is
final."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from finplat.providers.cards.base import CardAction
from finplat.providers.cards.models import SandboxCardprovCard
from finplat.providers.cards.sandbox import SandboxCardProgram
from tests.cards.funding.steps import active_card, purchase, set_fees, topup
from tests.cards.steps import card_detail, control, put_auto_lock
from tests.isolated import Isolated, isolated

SLOW_ANSWER_SECONDS = 0.5
LATER_SECONDS = 0.2  # the second control starts while the first one's answer is on its way


@pytest.fixture
def slow_freeze_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The card provider applies a freeze at once, but its answer is slow on the wire."""
    change_status = SandboxCardProgram.change_status

    async def slow_answer(self: SandboxCardProgram, **kwargs: Any) -> Any:
        answer = await change_status(self, **kwargs)
        if kwargs["action"] is CardAction.FREEZE:
            await asyncio.sleep(SLOW_ANSWER_SECONDS)
        return answer

    monkeypatch.setattr(SandboxCardProgram, "change_status", slow_answer)


async def _later(request: Callable[[], Awaitable[httpx.Response]]) -> httpx.Response:
    await asyncio.sleep(LATER_SECONDS)
    return await request()


async def _at_provider(env: Isolated) -> str:
    async with env.app.state.session_factory() as session:
        return str((await session.execute(select(SandboxCardprovCard.status))).scalar_one())


@pytest.mark.usefixtures("slow_freeze_answers")
async def test_a_slow_freeze_answer_does_not_undo_a_later_enable() -> None:
    async with isolated("controls") as env:
        api = env.client
        card = await active_card(api, master=100)
        # With auto-lock on, enabling an active card asks the provider to unlock it.
        locked = await put_auto_lock(api, card, True)
        assert locked.status_code == 200, locked.text
        frozen, enabled = await asyncio.gather(
            control(api, card, "freeze"), _later(lambda: control(api, card, "enable"))
        )
        assert (frozen.status_code, enabled.status_code) == (200, 200)
        assert await _at_provider(env) == "ACTIVE"  # the provider applied the enable last
        assert (await card_detail(api, card))["Status"] == "ACTIVE"


@pytest.mark.usefixtures("slow_freeze_answers")
async def test_a_slow_freeze_answer_does_not_bring_back_a_cancelled_card() -> None:
    async with isolated("controls") as env:
        api = env.client
        card = await active_card(api, master=100)
        params = {"userId": card["UserId"]}
        frozen, cancelled = await asyncio.gather(
            control(api, card, "freeze"),
            _later(lambda: api.delete(f"/api/v2/cards/{card['Id']}", params=params)),
        )
        assert cancelled.status_code == 200, cancelled.text
        assert frozen.status_code == 200, frozen.text
        assert frozen.json()["Status"] == "CANCELLED"
        assert (await card_detail(api, card))["Status"] == "CANCELLED"


@pytest.fixture
def slow_auto_lock_answers(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The card provider applies an auto-lock setting at once, but its answer to the settings
    listed in the returned list (set by the test) is slow on the wire."""
    slow_for: list[bool] = []
    set_auto_lock = SandboxCardProgram.set_auto_lock

    async def slow_answer(self: SandboxCardProgram, **kwargs: Any) -> Any:
        answer = await set_auto_lock(self, **kwargs)
        if kwargs["enabled"] in slow_for:
            await asyncio.sleep(SLOW_ANSWER_SECONDS)
        return answer

    monkeypatch.setattr(SandboxCardProgram, "set_auto_lock", slow_answer)
    return slow_for


async def _auto_lock_at_provider(env: Isolated) -> bool:
    async with env.app.state.session_factory() as session:
        return bool((await session.execute(select(SandboxCardprovCard.auto_lock))).scalar_one())


async def test_a_slow_auto_lock_answer_does_not_undo_a_later_setting(
    slow_auto_lock_answers: list[bool],
) -> None:
    slow_auto_lock_answers.append(True)
    async with isolated("controls") as env:
        api = env.client
        card = await active_card(api, master=100)
        on, off = await asyncio.gather(
            put_auto_lock(api, card, True), _later(lambda: put_auto_lock(api, card, False))
        )
        assert (on.status_code, off.status_code) == (200, 200)
        assert await _auto_lock_at_provider(env) is False  # the provider applied the off last
        assert (await card_detail(api, card))["AutoLockEnabled"] is False


async def test_after_a_slow_auto_lock_off_answer_enable_still_unlocks_a_locked_card(
    slow_auto_lock_answers: list[bool],
) -> None:
    async with isolated("controls") as env:
        api = env.client
        card = await active_card(api, master=100)
        await set_fees(api, card)
        assert (await topup(api, card, 50)).status_code == 200
        assert (await put_auto_lock(api, card, True)).status_code == 200
        slow_auto_lock_answers.append(False)
        off, on = await asyncio.gather(
            put_auto_lock(api, card, False), _later(lambda: put_auto_lock(api, card, True))
        )
        assert (off.status_code, on.status_code) == (200, 200)
        assert (await card_detail(api, card))["AutoLockEnabled"] is True
        assert (await purchase(api, card, 5))["Status"] == "SETTLED"
        assert (await purchase(api, card, 5))["DeclineReason"] == "AUTO_LOCKED"
        # The card knows auto-lock is on, so enable asks the provider to unlock it.
        assert (await control(api, card, "enable")).status_code == 200
        assert (await purchase(api, card, 5))["Status"] == "SETTLED"
