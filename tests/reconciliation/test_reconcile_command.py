"""`finplat reconcile`: prints the report; exit 0 when clean, 1 when a difference remains."""

from __future__ import annotations

import json

from sqlalchemy import update

from finplat.providers.banking.sandbox.models import SandboxBankprovBalance
from tests.banking.steps import funded_user
from tests.isolated import isolated
from tests.processes import environment, run_cli


async def test_the_command_exits_0_when_clean_and_1_on_a_difference() -> None:
    async with isolated("reconcile") as env:
        _, budget = await funded_user(env.client, "80.00", "USD")
        code, out, err = await run_cli(environment(env.url), "reconcile", "--json", check=False)
        assert code == 0, out + err
        clean = json.loads(out)
        assert clean["ok"] is True
        assert clean["balances"]["checked"] == 5
        assert clean["balances"]["differences"] == []

        async with env.app.state.session_factory() as session:
            await session.execute(
                update(SandboxBankprovBalance)
                .where(SandboxBankprovBalance.currency == "USD")
                .values(amount_minor=8100)
            )
            await session.commit()
        code, out, _ = await run_cli(
            environment(env.url), "reconcile", "--company-id", str(env.company_id), check=False
        )
        assert code == 1, out
        assert f"company {env.company_id}" in out
        assert f"budget {budget['BudgetId']} USD: ledger 80.00, provider 81.00" in out
        assert "difference 1.00" in out
        assert "reconciliation FOUND PROBLEMS" in out


async def test_the_command_refuses_an_unknown_company() -> None:
    async with isolated("reconcile-unknown") as env:
        code, _, err = await run_cli(
            environment(env.url), "reconcile", "--company-id", "987654321", check=False
        )
        assert code == 2
        assert "COMPANY_NOT_FOUND" in err
