"""The sandbox card programme applies status changes racing on one card one after the other,
as a real provider does: each change is decided on the card as the one before left it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from finplat.providers.cards.port import CardAction, ProviderCardStatus
from finplat.providers.cards.sandbox.adapter import SandboxCardProgram
from tests.databases import backend
from tests.isolated import isolated
from tests.providers.test_card_bulk_loads import issued, program

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="row locks: PostgreSQL")
READ_TO_WRITE_SECONDS = 0.3  # how long the first change takes between reading and writing


async def test_a_freeze_racing_a_cancellation_does_not_reopen_the_cancelled_card(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with isolated("cardstatus") as env:
        cards = program(env.app.state.session_factory)
        ref = await issued(cards, env.company_id, "c-1")
        read_row = SandboxCardProgram._row
        slow = {"next": True}

        async def slow_after_reading(self: SandboxCardProgram, *args: Any, **kwargs: Any) -> Any:
            row = await read_row(self, *args, **kwargs)
            if slow.pop("next", False):
                await asyncio.sleep(READ_TO_WRITE_SECONDS)
            return row

        monkeypatch.setattr(SandboxCardProgram, "_row", slow_after_reading)

        async def cancel_meanwhile() -> Any:
            await asyncio.sleep(READ_TO_WRITE_SECONDS / 3)
            return await cards.change_status(
                company_id=env.company_id, card_id=ref, action=CardAction.CANCEL
            )

        frozen, cancelled = await asyncio.gather(
            cards.change_status(company_id=env.company_id, card_id=ref, action=CardAction.FREEZE),
            cancel_meanwhile(),
        )
        assert frozen.status == ProviderCardStatus.FROZEN  # applied first
        assert cancelled.status == ProviderCardStatus.CANCELLED
        assert cancelled.updated_at > frozen.updated_at
        seen = await cards.change_status(
            company_id=env.company_id, card_id=ref, action=CardAction.CANCEL
        )
        assert seen.status == ProviderCardStatus.CANCELLED
