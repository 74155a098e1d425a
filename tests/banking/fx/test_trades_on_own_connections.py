"""FX trades where every session has a connection of its own, as under `finplat serve`.

The other tests share one connection, so they cannot show a lock held across the provider
call. Here, on SQLite, such a lock makes the sandbox provider's own session wait for the write
lock until the call times out, and the trade answers `PENDING` instead of `COMPLETED`.
"""

from __future__ import annotations

from tests.banking.fx.steps import execute, quoted
from tests.banking.steps import funded_user
from tests.isolated import isolated


async def test_a_trade_completes_at_once_when_each_session_has_its_own_connection() -> None:
    async with isolated("fx-own-connections", provider_timeout_seconds=2.0) as env:
        user, _ = await funded_user(env.client, "1000.00", "EUR")
        offer = await quoted(env.client, user, amount=100)
        response = await execute(env.client, user, offer["QuoteId"], key="own-connections")
        assert response.status_code == 201, response.text
        assert response.json()["Status"] == "COMPLETED"
