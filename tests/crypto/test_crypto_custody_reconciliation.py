"""Reconciliation of the crypto rail's custody: per company and stablecoin, what the rail holds
(from its own records) against the ledger's position at the rail (minus the coin settlement
account's posted balance, plus deposits on chain not credited and auto top-up conversions)."""

from __future__ import annotations

from decimal import Decimal

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import update

from finplat.crypto import balances
from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.service import CompanyAccount
from finplat.providers.crypto.sandbox.models import SandboxConversion
from finplat.reconciliation.crypto_custody import CryptoCustody
from finplat.reconciliation.report import ReconciliationReport
from finplat.reconciliation.service import reconcile
from tests.cards.funding.steps import active_card, set_auto_topup, set_fees
from tests.conftest import Tenant
from tests.crypto.card_steps import (
    card_load,
    card_to_bank,
    card_to_bank_quote,
    cardprov_quote,
    confirm_load,
    execute,
    funded_card_user,
    loaded_card_user,
    settle_card_to_bank,
    settle_delivery,
)
from tests.crypto.steps import (
    accept,
    credited_user,
    crypto_banking_user,
    exchange_quote,
    payin_address,
    reorg,
    send,
    settle_conversion,
)
from tests.crypto.withdrawal_steps import code_of, confirm, external_address, initiated, settle
from tests.onboarding import set_fault


@pytest.fixture
def no_cooling_off(app: FastAPI) -> None:
    app.state.settings = app.state.settings.model_copy(
        update={"crypto_withdrawal_cooling_off_hours": 0}
    )


async def _custody(app: FastAPI, tenant: Tenant) -> ReconciliationReport:
    return await reconcile(
        app.state.session_factory,
        app.state.providers,
        company_id=tenant.company_id,
        checkers=[CryptoCustody()],
    )


def _differences(report: ReconciliationReport) -> list[tuple[str, Decimal, Decimal]]:
    return [
        (d.currency, Decimal(d.ledger_minor) / 10**6, Decimal(d.provider_minor) / 10**6)
        for d in report.differences
    ]


@pytest.mark.usefixtures("no_cooling_off")
async def test_a_normal_sequence_of_crypto_flows_reconciles_clean(
    app: FastAPI, api: httpx.AsyncClient, tenant: Tenant
) -> None:
    user, budget, card = await funded_card_user(api)
    await set_fees(api, card)
    uid = user["Id"]
    usdc = await payin_address(api, uid, "USDC", 1)
    assert (await send(api, usdc["Address"], "500", confirmations=64))["Status"] == "CREDITED"
    # A conversion (with its fee kept at the rail), completed.
    quote = await exchange_quote(api, uid, budget["BudgetId"], "100")
    sale = (await accept(api, uid, quote["QuoteId"])).json()
    assert (await settle_conversion(api, uid, sale["TransferId"], "COMPLETED"))[
        "Status"
    ] == "COMPLETED"
    # A withdrawal with its network fee, confirmed on chain.
    started = await initiated(api, uid, external_address(1), amount="40")
    code = await code_of(api, uid, started["TransferId"])
    assert (await confirm(api, uid, started["TransferId"], code)).status_code == 200
    assert (await settle(api, uid, started["TransferId"], "CONFIRMED"))["Status"] == "COMPLETED"
    # A crypto card load, final and credited.
    load = (await card_load(api, uid, card["Id"], "30", key="load-clean")).json()
    assert (await confirm_load(api, uid, load["LoadId"]))["Status"] == "COMPLETED"
    # A card-provider funding from the budget (its USDC fee stays in custody).
    funding = await cardprov_quote(api, uid, budget["BudgetId"], card["Id"], "100")
    sent = (await execute(api, uid, funding["QuoteId"])).json()
    assert (await settle_delivery(api, uid, sent["TransferId"], "COMPLETED"))[
        "Status"
    ] == "COMPLETED"
    # In flight: a withdrawal waiting for its code, a deposit not final yet, USDT at a USDC
    # address (kept for return).
    await initiated(api, uid, external_address(1), amount="10")
    assert (await send(api, usdc["Address"], "7", confirmations=3))["Status"] == "PENDING"
    assert (await send(api, usdc["Address"], "2", "USDT"))["Status"] == "UNSUPPORTED"

    report = await _custody(app, tenant)

    assert report.balances_checked == 2  # USDC and USDT
    assert report.differences == []
    assert report.unchecked == []
    assert report.ok


async def test_a_movement_the_rail_did_not_make_as_the_ledger_says_is_reported(
    app: FastAPI, api: httpx.AsyncClient, tenant: Tenant
) -> None:
    user, budget = await crypto_banking_user(api, "100")
    quote = await exchange_quote(api, user["Id"], budget["BudgetId"], "50")
    sale = (await accept(api, user["Id"], quote["QuoteId"])).json()
    await settle_conversion(api, user["Id"], sale["TransferId"], "COMPLETED")
    # The rail's record of the sale says it sold one coin more than the platform asked.
    async with app.state.session_factory() as session, session.begin():
        await session.execute(
            update(SandboxConversion)
            .where(SandboxConversion.company_id == tenant.company_id)
            .values(amount_minor=SandboxConversion.amount_minor + 1_000_000)
        )

    report = await _custody(app, tenant)

    # Sold 50 less the 0.25 fee: 49.75 left custody in both, then one more at the rail.
    assert _differences(report) == [("USDC", Decimal("50.25"), Decimal("49.25"))]
    assert report.differences[0].difference_minor == -1_000_000
    assert report.differences[0].user_id is None
    assert report.differences[0].source == "crypto"
    assert not report.ok
    assert "custody USDC" in report.summary()


async def test_coins_the_ledger_credited_without_the_rail_are_reported(
    app: FastAPI, api: httpx.AsyncClient, tenant: Tenant
) -> None:
    user, _ = await credited_user(api, "100", "USDT", 137)
    # A credit booked in the ledger with no transfer on chain behind it.
    async with unit_of_work(app.state.session_factory) as session:
        bind_company(session, tenant.company_id)
        wallet = await balances.wallet_account(
            session, company_id=tenant.company_id, user_id=user["Id"], currency="USDT"
        )
        settlement = await ledger.company_account(
            session, company_id=tenant.company_id, kind=CompanyAccount.SETTLEMENT, currency="USDT"
        )
        await ledger.post_transfer(
            session,
            company_id=tenant.company_id,
            legs=[Leg(settlement.id, -5_000_000), Leg(wallet.id, 5_000_000)],
            code="test.phantom_credit",
        )

    report = await _custody(app, tenant)

    assert _differences(report) == [("USDT", Decimal(105), Decimal(100))]


async def test_a_deposit_reorganised_away_after_its_credit_is_reported(
    app: FastAPI, api: httpx.AsyncClient, tenant: Tenant
) -> None:
    user, deposit = await credited_user(api, "100")
    await reorg(api, user["Id"], deposit["DepositId"])  # the credit stands in the ledger

    report = await _custody(app, tenant)

    assert _differences(report) == [("USDC", Decimal(100), Decimal(0))]


async def test_a_company_without_crypto_is_not_checked(
    app: FastAPI, api: httpx.AsyncClient, tenant: Tenant
) -> None:
    report = await reconcile(
        app.state.session_factory, app.state.providers, checkers=[CryptoCustody()]
    )
    assert tenant.company_id not in report.companies
    assert report.balances_checked == 0


async def test_a_rail_that_does_not_answer_leaves_custody_unchecked(
    app: FastAPI, api: httpx.AsyncClient, tenant: Tenant
) -> None:
    await credited_user(api, "100")
    await set_fault(api, "crypto", "custody_balances", "error")

    report = await _custody(app, tenant)

    assert [(u.source, u.user_id) for u in report.unchecked] == [("crypto", None)]
    assert report.differences == []
    assert not report.ok


async def test_coins_an_auto_top_up_converted_stay_at_the_rail_and_reconcile(
    app: FastAPI, api: httpx.AsyncClient, tenant: Tenant
) -> None:
    card = await active_card(api, master=0)
    await set_fees(api, card)
    rule = await set_auto_topup(
        api, card, "deposit", Enabled=True, Amount=25, MonthlyLimit=100, Currency="USDC"
    )
    assert rule.status_code == 200, rule.text
    address = await payin_address(api, card["UserId"], "USDC", 137)
    deposit = await send(api, address["Address"], "40", "USDC", 137, confirmations=128)
    assert deposit["AutoTopupStatus"] == "TOPPED_UP"

    report = await _custody(app, tenant)

    # The ledger holds 15 for the user; the rail still holds all 40 (nothing was sold).
    assert report.differences == []
    assert await app.state.providers.crypto.custody_balances(company_id=tenant.company_id) == {
        "USDC": 40_000_000
    }


async def test_a_completed_card_provider_to_bank_transfer_reconciles_clean(
    app: FastAPI, api: httpx.AsyncClient, tenant: Tenant
) -> None:
    """The card provider's coins arrive at the rail for the sale and leave with it: the sale
    is no movement of the company's custody."""
    user, budget, card = await loaded_card_user(api)
    quote = await card_to_bank_quote(api, user["Id"], card["Id"], budget["BudgetId"], "100")
    transfer = (await card_to_bank(api, user["Id"], quote["QuoteId"])).json()
    done = await settle_card_to_bank(api, user["Id"], transfer["TransferId"], "COMPLETED")
    assert done["Status"] == "COMPLETED"
    report = await _custody(app, tenant)
    assert _differences(report) == []
