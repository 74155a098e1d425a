"""`finplat ledger verify`: exit 0 on a consistent ledger, 1 with the problem on a broken one."""

from __future__ import annotations

from sqlalchemy import update

from finplat.ledger.models import LedgerBalance
from tests.isolated import isolated
from tests.processes import environment, run_cli


async def test_verify_command_passes_then_fails_on_a_tampered_balance() -> None:
    async with isolated("verify") as env:
        funded = await env.client.post(
            "/api/v2/sandbox/company/funding", json={"Currency": "EUR", "Amount": 300}
        )
        assert funded.status_code == 200
        code, out, _ = await run_cli(environment(env.url), "ledger", "verify", check=False)
        assert code == 0, out
        assert "ledger OK" in out
        async with env.app.state.session_factory() as session:
            await session.execute(
                update(LedgerBalance).where(LedgerBalance.posted > 0).values(posted=1)
            )
            await session.commit()
        code, out, _ = await run_cli(environment(env.url), "ledger", "verify", check=False)
        assert code == 1
        assert "ledger BROKEN" in out
        assert "!= entries" in out
