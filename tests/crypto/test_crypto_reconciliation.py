"""A crypto-to-fiat transfer whose rail callback was lost is settled by reconciliation from
the rail's record, once."""

from __future__ import annotations

from decimal import Decimal

import httpx
from fastapi import FastAPI
from sqlalchemy import select

from finplat.providers.crypto.sandbox.models import SandboxConversion
from finplat.reconciliation.service import reconcile
from tests.conftest import Tenant
from tests.crypto.steps import accept, crypto_balance, crypto_banking_user, exchange_quote

STATUS = "/api/v2/crypto-virtual-accounts/bankprov-deposits"


async def test_reconciliation_settles_a_conversion_whose_callback_was_lost(
    app: FastAPI, api: httpx.AsyncClient, tenant: Tenant
) -> None:
    user, budget = await crypto_banking_user(api)
    quote = await exchange_quote(api, user["Id"], budget["BudgetId"], "10")
    transfer = (await accept(api, user["Id"], quote["QuoteId"])).json()
    factory = app.state.session_factory
    async with factory() as session:
        reference = (
            await session.execute(
                select(SandboxConversion.reference).where(
                    SandboxConversion.company_id == tenant.company_id
                )
            )
        ).scalar_one()
    # The rail decides, and its callback never arrives (nothing delivers it here).
    await app.state.providers.crypto.settle_conversion(
        company_id=tenant.company_id, conversion_id=reference, completed=False
    )
    report = await reconcile(factory, app.state.providers, company_id=tenant.company_id)
    assert [(s.transaction_id, s.type, s.status) for s in report.settled] == [
        (transfer["TransferId"], "CRYPTO_TRANSFER", "FAILED")
    ]
    again = await reconcile(factory, app.state.providers, company_id=tenant.company_id)
    assert again.settled == []
    assert Decimal(str((await crypto_balance(api, user["Id"]))["Available"])) == 100
    read = await api.get(f"{STATUS}/{transfer['TransferId']}", params={"userId": user["Id"]})
    assert read.json()["Status"] == "FAILED"


async def test_reconciliation_reports_an_undecided_conversion_pending(
    app: FastAPI, api: httpx.AsyncClient, tenant: Tenant
) -> None:
    user, budget = await crypto_banking_user(api)
    quote = await exchange_quote(api, user["Id"], budget["BudgetId"], "10")
    transfer = (await accept(api, user["Id"], quote["QuoteId"])).json()
    report = await reconcile(
        app.state.session_factory, app.state.providers, company_id=tenant.company_id
    )
    assert [(p.transaction_id, p.type) for p in report.pending] == [
        (transfer["TransferId"], "CRYPTO_TRANSFER")
    ]
