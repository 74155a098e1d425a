"""A top-up batch runner serves many requests, so it starts with none of the context of the
request that happened to start it: not its log fields, not its open sessions (the check that
no provider is called inside a transaction would blame the runner for that request's)."""

from __future__ import annotations

from typing import Any

import pytest
import structlog
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.datastructures import State

from finplat.cards.topup_batches import HandedBack, TopupBatches, TopupOrder
from finplat.db import open_sessions

ORDER = TopupOrder(
    company_id=1,
    api_key_id=1,
    card_id=1,
    amount_minor=1000,
    idempotency_key="k-1",
    fingerprint="f",
)


async def test_a_runner_starts_without_the_submitting_requests_context(
    monkeypatch: pytest.MonkeyPatch, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    seen: dict[str, Any] = {}

    async def record_context_and_hand_back(self: TopupBatches) -> None:
        seen["log_fields"] = structlog.contextvars.get_contextvars()
        seen["open_sessions"] = open_sessions._open.get()
        self._hand_back_waiting()

    monkeypatch.setattr(TopupBatches, "_run_on_one_connection", record_context_and_hand_back)
    batches = TopupBatches(State(), batch_size=16, runners=1)
    structlog.contextvars.bind_contextvars(request_id="req-1")
    try:
        async with session_factory() as session:
            await session.execute(select(1))
            assert open_sessions.holds_transaction()
            assert await batches.submit(ORDER) is HandedBack.UNTOUCHED  # back to the route
    finally:
        structlog.contextvars.unbind_contextvars("request_id")
    assert seen == {"log_fields": {}, "open_sessions": ()}
