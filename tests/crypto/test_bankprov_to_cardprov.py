"""Fiat to the card provider: a quote priced in USDC with its fee, decided once (approved or
declined), the fiat reserved while the rail delivers, posted or released on its outcome, an
unknown outcome left pending for reconciliation."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import httpx
from fastapi import FastAPI
from sqlalchemy import select

from finplat.kit.clock import set_clock, utcnow
from finplat.providers.crypto.sandbox.card_transfers import SandboxCardTransfer
from finplat.reconciliation.service import reconcile
from tests.banking.steps import available
from tests.cards.funding.outcome_steps import cancel
from tests.cards.funding.steps import master_available
from tests.conftest import Tenant
from tests.crypto.card_steps import (
    CARDPROV,
    cardprov_quote,
    decide,
    execute,
    funded_card_user,
    settle_delivery,
)
from tests.onboarding import set_fault

TRANSFERS = "/api/v2/crypto-virtual-accounts/transfers"


async def test_a_quote_prices_the_fiat_in_usdc_with_its_fee(api: httpx.AsyncClient) -> None:
    user, budget, card = await funded_card_user(api)
    quote = await cardprov_quote(api, user["Id"], budget["BudgetId"], card["Id"], "100", "EUR")
    assert quote["Status"] == "OPEN"
    assert quote["Direction"] == "BANKPROV_TO_CARDPROV"
    assert quote["ExchangeRate"] == "1.07730000"  # 1.08 less the 0.25 % spread
    assert Decimal(str(quote["CryptoAmount"])) == Decimal("107.73")
    assert Decimal(str(quote["Fee"])) == Decimal("0.54")  # 0.5 % of 107.73, rounded up
    assert Decimal(str(quote["DeliveredAmount"])) == Decimal("107.19")


async def test_an_approved_quote_reserves_the_fiat_in_the_budget(api: httpx.AsyncClient) -> None:
    user, budget, card = await funded_card_user(api)
    quote = await cardprov_quote(api, user["Id"], budget["BudgetId"], card["Id"], "100")
    response = await decide(api, user["Id"], quote["QuoteId"], "APPROVE")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["Quote"]["Status"] == "APPROVED"
    transfer = body["Transfer"]
    assert transfer["Type"] == "BANKPROV_TO_CARDPROV"
    assert transfer["Status"] == "PENDING"
    assert transfer["FiatAmount"] == quote["FiatAmount"]
    assert body["Quote"]["TransferId"] == transfer["TransferId"]
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal(900)


async def test_a_completed_delivery_posts_the_fiat_and_reaches_the_card_provider(
    api: httpx.AsyncClient,
) -> None:
    user, budget, card = await funded_card_user(api)
    before = await master_available(api)
    quote = await cardprov_quote(api, user["Id"], budget["BudgetId"], card["Id"], "100")
    transfer = (await execute(api, user["Id"], quote["QuoteId"])).json()
    done = await settle_delivery(api, user["Id"], transfer["TransferId"], "COMPLETED")
    assert done["Status"] == "COMPLETED"
    assert done["CompletedAt"] is not None
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal(900)
    # The card provider settles the 107.19 USDC deposit into USD for the company.
    assert await master_available(api) == before + Decimal("107.19")
    read = await api.get(f"{TRANSFERS}/{transfer['TransferId']}", params={"userId": user["Id"]})
    assert read.json()["Status"] == "COMPLETED"


async def test_a_failed_delivery_gives_the_fiat_back(api: httpx.AsyncClient) -> None:
    user, budget, card = await funded_card_user(api)
    quote = await cardprov_quote(api, user["Id"], budget["BudgetId"], card["Id"], "250")
    transfer = (await execute(api, user["Id"], quote["QuoteId"])).json()
    failed = await settle_delivery(api, user["Id"], transfer["TransferId"], "FAILED")
    assert failed["Status"] == "FAILED"
    assert failed["StatusReason"]
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal(1000)


async def test_a_declined_quote_moves_nothing_and_cannot_be_approved(
    api: httpx.AsyncClient,
) -> None:
    user, budget, card = await funded_card_user(api)
    quote = await cardprov_quote(api, user["Id"], budget["BudgetId"], card["Id"], "100")
    declined = await decide(api, user["Id"], quote["QuoteId"], "DECLINE")
    assert declined.status_code == 200, declined.text
    assert declined.json()["Quote"]["Status"] == "DECLINED"
    assert declined.json()["Transfer"] is None
    again = await execute(api, user["Id"], quote["QuoteId"])
    assert again.status_code == 409
    assert again.json()["Code"] == "QUOTE_DECLINED"
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal(1000)


async def test_a_quote_is_approved_once(api: httpx.AsyncClient) -> None:
    user, budget, card = await funded_card_user(api)
    quote = await cardprov_quote(api, user["Id"], budget["BudgetId"], card["Id"], "100")
    first = await execute(api, user["Id"], quote["QuoteId"], key="cp-1")
    assert first.status_code == 201, first.text
    again = await decide(api, user["Id"], quote["QuoteId"], "APPROVE", key="cp-2")
    assert again.status_code == 409
    assert again.json()["Code"] == "QUOTE_ALREADY_ACCEPTED"
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal(900)


async def test_a_retry_with_the_same_key_answers_the_first_approval(
    api: httpx.AsyncClient,
) -> None:
    user, budget, card = await funded_card_user(api)
    quote = await cardprov_quote(api, user["Id"], budget["BudgetId"], card["Id"], "100")
    first = await execute(api, user["Id"], quote["QuoteId"], key="cp-same")
    again = await execute(api, user["Id"], quote["QuoteId"], key="cp-same")
    assert again.status_code == 201
    assert again.json() == first.json()


async def test_an_expired_quote_cannot_be_approved(api: httpx.AsyncClient) -> None:
    user, budget, card = await funded_card_user(api)
    quote = await cardprov_quote(api, user["Id"], budget["BudgetId"], card["Id"], "100")
    later = utcnow() + timedelta(seconds=31)
    set_clock(lambda: later)
    response = await decide(api, user["Id"], quote["QuoteId"], "APPROVE")
    assert response.status_code == 409
    assert response.json()["Code"] == "QUOTE_EXPIRED"


async def test_more_than_the_budget_holds_is_409_and_leaves_the_quote_open(
    api: httpx.AsyncClient,
) -> None:
    user, budget, card = await funded_card_user(api, "50")
    quote = await cardprov_quote(api, user["Id"], budget["BudgetId"], card["Id"], "60")
    response = await execute(api, user["Id"], quote["QuoteId"])
    assert response.status_code == 409
    assert response.json()["Code"] == "INSUFFICIENT_FUNDS"
    read = await decide(api, user["Id"], quote["QuoteId"], "DECLINE")
    assert read.status_code == 200  # still open


async def test_another_users_quote_is_404(api: httpx.AsyncClient) -> None:
    user, budget, card = await funded_card_user(api)
    other, _, _ = await funded_card_user(api)
    quote = await cardprov_quote(api, user["Id"], budget["BudgetId"], card["Id"], "10")
    response = await execute(api, other["Id"], quote["QuoteId"])
    assert response.status_code == 404
    assert response.json()["Code"] == "QUOTE_NOT_FOUND"


async def test_another_users_card_is_404(api: httpx.AsyncClient) -> None:
    user, budget, _ = await funded_card_user(api)
    _, _, other_card = await funded_card_user(api)
    response = await api.post(
        f"{CARDPROV}/quote",
        params={"userId": user["Id"]},
        json={
            "BudgetId": budget["BudgetId"],
            "FiatCurrency": "EUR",
            "Amount": 10,
            "CardId": other_card["Id"],
        },
    )
    assert response.status_code == 404
    assert response.json()["Code"] == "CARD_NOT_FOUND"


async def test_an_unknown_decision_is_400(api: httpx.AsyncClient) -> None:
    user, budget, card = await funded_card_user(api)
    quote = await cardprov_quote(api, user["Id"], budget["BudgetId"], card["Id"], "10")
    response = await decide(api, user["Id"], quote["QuoteId"], "MAYBE")
    assert response.status_code == 400
    assert "Decision" in response.json()["ValidationErrors"]


async def test_a_rail_timeout_leaves_the_transfer_pending_for_reconciliation(
    app: FastAPI, api: httpx.AsyncClient, tenant: Tenant
) -> None:
    user, budget, card = await funded_card_user(api)
    quote = await cardprov_quote(api, user["Id"], budget["BudgetId"], card["Id"], "100")
    await set_fault(api, "crypto", "fund_card_provider", "timeout")
    response = await execute(api, user["Id"], quote["QuoteId"], key="cp-timeout")
    assert response.status_code == 201, response.text
    assert response.json()["Status"] == "PENDING"
    transfer_id = response.json()["TransferId"]
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal(900)
    factory = app.state.session_factory
    report = await reconcile(factory, app.state.providers, company_id=tenant.company_id)
    assert [(p.transaction_id, p.type) for p in report.pending] == [
        (transfer_id, "CRYPTO_TRANSFER")
    ]
    # The rail fails it, and its callback never arrives (nothing delivers it here).
    async with factory() as session:
        reference = (
            await session.execute(
                select(SandboxCardTransfer.reference).where(
                    SandboxCardTransfer.company_id == tenant.company_id
                )
            )
        ).scalar_one()
    await app.state.providers.crypto.settle_card_transfer(
        company_id=tenant.company_id, reference=reference, completed=False
    )
    report = await reconcile(factory, app.state.providers, company_id=tenant.company_id)
    assert [(s.transaction_id, s.status) for s in report.settled] == [(transfer_id, "FAILED")]
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal(1000)


async def test_a_rail_refusal_fails_the_transfer_and_releases_the_fiat(
    api: httpx.AsyncClient,
) -> None:
    user, budget, card = await funded_card_user(api)
    quote = await cardprov_quote(api, user["Id"], budget["BudgetId"], card["Id"], "100")
    await set_fault(api, "crypto", "fund_card_provider", "error")
    response = await execute(api, user["Id"], quote["QuoteId"], key="cp-refused")
    assert response.status_code == 422, response.text
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal(1000)
    again = await execute(api, user["Id"], quote["QuoteId"], key="cp-refused")
    assert again.status_code == 422


async def test_the_transfer_list_filters_the_new_type(api: httpx.AsyncClient) -> None:
    user, budget, card = await funded_card_user(api)
    quote = await cardprov_quote(api, user["Id"], budget["BudgetId"], card["Id"], "10")
    transfer = (await execute(api, user["Id"], quote["QuoteId"])).json()
    listed = await api.get(
        TRANSFERS, params={"userId": user["Id"], "types": "BANKPROV_TO_CARDPROV"}
    )
    assert [t["TransferId"] for t in listed.json()["Items"]] == [transfer["TransferId"]]
    other = await api.get(TRANSFERS, params={"userId": user["Id"], "types": "BANKPROV_DEPOSIT"})
    assert other.json()["Items"] == []


async def test_each_state_change_is_an_event(api: httpx.AsyncClient) -> None:
    user, budget, card = await funded_card_user(api)
    quote = await cardprov_quote(api, user["Id"], budget["BudgetId"], card["Id"], "10")
    transfer = (await execute(api, user["Id"], quote["QuoteId"])).json()
    await settle_delivery(api, user["Id"], transfer["TransferId"], "COMPLETED")
    response = await api.get("/api/v2/events", params={"pageSize": 100})
    assert response.status_code == 200, response.text
    types = [
        e["Type"]
        for e in response.json()["Items"]
        if e["Data"].get("transferId") == transfer["TransferId"]
    ]
    assert sorted(types) == [
        "crypto.bankprov_to_cardprov.completed",
        "crypto.bankprov_to_cardprov.pending",
    ]


async def test_a_card_cancelled_after_the_quote_reserves_nothing(api: httpx.AsyncClient) -> None:
    user, budget, card = await funded_card_user(api)
    quote = await cardprov_quote(api, user["Id"], budget["BudgetId"], card["Id"], "100")
    assert (await cancel(api, card)).status_code == 200
    response = await execute(api, user["Id"], quote["QuoteId"])
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "CARD_CANCELLED"
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal(1000)
