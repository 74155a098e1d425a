"""Card provider to banking provider: the card's USD priced into a budget's fiat, decided once,
the card unloaded under the transfer's key, the net reserved toward the budget while the rail
converts it, posted on completion; a failed conversion puts the whole amount back on the card
and keeps no fee; an unknown outcome stays pending for the read and reconciliation."""

from __future__ import annotations

from datetime import timedelta
from decimal import ROUND_DOWN, Decimal

import httpx
from fastapi import FastAPI
from sqlalchemy import select

from finplat.crypto.transfers.models import CryptoTransfer
from finplat.kit.clock import set_clock, utcnow
from finplat.reconciliation.service import reconcile
from tests.banking.steps import available
from tests.cards.funding.steps import card_balance, master_available, set_fees
from tests.conftest import Tenant
from tests.crypto.card_steps import (
    CARD_TO_BANK,
    card_to_bank,
    card_to_bank_decide,
    card_to_bank_quote,
    cardprov_quote,
    loaded_card_user,
    settle_card_to_bank,
)
from tests.onboarding import set_fault

TRANSFERS = "/api/v2/crypto-virtual-accounts/transfers"


def dec(value: object) -> Decimal:
    return Decimal(str(value))


async def test_a_quote_prices_the_card_amount_less_the_unload_fee_in_the_budgets_fiat(
    api: httpx.AsyncClient,
) -> None:
    user, budget, card = await loaded_card_user(api)
    quote = await card_to_bank_quote(api, user["Id"], card["Id"], budget["BudgetId"], "100")
    assert quote["Direction"] == "CARDPROV_TO_BANKPROV"
    assert quote["Status"] == "OPEN"
    assert dec(quote["CardAmount"]) == Decimal(100)
    assert dec(quote["CryptoAmount"]) == Decimal(100) - dec(quote["CardFee"])
    assert dec(quote["DeliveredAmount"]) == dec(quote["CryptoAmount"]) - dec(quote["Fee"])
    sold = (dec(quote["DeliveredAmount"]) * Decimal(quote["ExchangeRate"])).quantize(
        Decimal("0.01"), ROUND_DOWN
    )
    assert dec(quote["FiatAmount"]) == sold


async def test_an_approval_unloads_the_card_and_leaves_the_transfer_pending(
    api: httpx.AsyncClient,
) -> None:
    user, budget, card = await loaded_card_user(api)
    before = await card_balance(api, card)
    quote = await card_to_bank_quote(api, user["Id"], card["Id"], budget["BudgetId"], "100")
    response = await card_to_bank_decide(api, user["Id"], quote["QuoteId"], "APPROVE")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["Quote"]["Status"] == "APPROVED"
    assert body["Transfer"]["Type"] == "CARDPROV_TO_BANKPROV"
    assert body["Transfer"]["Status"] == "PENDING"
    assert await card_balance(api, card) == before - 100
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal(1000)


async def test_a_completed_conversion_pays_the_budget(api: httpx.AsyncClient) -> None:
    user, budget, card = await loaded_card_user(api)
    before = await card_balance(api, card)
    quote = await card_to_bank_quote(api, user["Id"], card["Id"], budget["BudgetId"], "100")
    transfer = (await card_to_bank(api, user["Id"], quote["QuoteId"])).json()
    done = await settle_card_to_bank(api, user["Id"], transfer["TransferId"], "COMPLETED")
    assert done["Status"] == "COMPLETED"
    assert done["CompletedAt"] is not None
    paid = Decimal(1000) + dec(quote["FiatAmount"])
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == paid
    assert await card_balance(api, card) == before - 100


async def test_a_failed_conversion_puts_the_whole_amount_back_on_the_card_free_of_fees(
    api: httpx.AsyncClient,
) -> None:
    user, budget, card = await loaded_card_user(api)
    await set_fees(api, card, UnloadFeePercentage=1.5, UnloadFixedFee=0.5, TopupFeePercentage=2)
    card_before, master_before = await card_balance(api, card), await master_available(api)
    quote = await card_to_bank_quote(api, user["Id"], card["Id"], budget["BudgetId"], "100")
    assert dec(quote["CardFee"]) == Decimal("2.00")  # the refund gives a real fee back
    transfer = (await card_to_bank(api, user["Id"], quote["QuoteId"])).json()
    failed = await settle_card_to_bank(api, user["Id"], transfer["TransferId"], "FAILED")
    assert failed["Status"] == "FAILED"
    assert failed["StatusReason"]
    assert await card_balance(api, card) == card_before
    assert await master_available(api) == master_before
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal(1000)


async def test_more_than_the_card_holds_is_409_and_leaves_the_quote_open(
    api: httpx.AsyncClient,
) -> None:
    user, budget, card = await loaded_card_user(api, "50")
    quote = await card_to_bank_quote(api, user["Id"], card["Id"], budget["BudgetId"], "100")
    response = await card_to_bank(api, user["Id"], quote["QuoteId"])
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "INSUFFICIENT_CARD_BALANCE"
    declined = await card_to_bank_decide(api, user["Id"], quote["QuoteId"], "DECLINE")
    assert declined.status_code == 200  # still open


async def test_a_retry_with_the_same_key_unloads_once(api: httpx.AsyncClient) -> None:
    user, budget, card = await loaded_card_user(api)
    before = await card_balance(api, card)
    quote = await card_to_bank_quote(api, user["Id"], card["Id"], budget["BudgetId"], "100")
    first = await card_to_bank(api, user["Id"], quote["QuoteId"], key="c2b-same")
    again = await card_to_bank(api, user["Id"], quote["QuoteId"], key="c2b-same")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert await card_balance(api, card) == before - 100


async def test_a_quote_is_approved_once(api: httpx.AsyncClient) -> None:
    user, budget, card = await loaded_card_user(api)
    quote = await card_to_bank_quote(api, user["Id"], card["Id"], budget["BudgetId"], "100")
    assert (await card_to_bank(api, user["Id"], quote["QuoteId"], key="a")).status_code == 201
    again = await card_to_bank_decide(api, user["Id"], quote["QuoteId"], "APPROVE", key="b")
    assert again.status_code == 409
    assert again.json()["Code"] == "QUOTE_ALREADY_ACCEPTED"


async def test_a_declined_quote_cannot_be_approved(api: httpx.AsyncClient) -> None:
    user, budget, card = await loaded_card_user(api)
    quote = await card_to_bank_quote(api, user["Id"], card["Id"], budget["BudgetId"], "100")
    declined = await card_to_bank_decide(api, user["Id"], quote["QuoteId"], "DECLINE")
    assert declined.json()["Transfer"] is None
    again = await card_to_bank(api, user["Id"], quote["QuoteId"])
    assert again.status_code == 409
    assert again.json()["Code"] == "QUOTE_DECLINED"


async def test_an_expired_quote_cannot_be_approved(api: httpx.AsyncClient) -> None:
    user, budget, card = await loaded_card_user(api)
    quote = await card_to_bank_quote(api, user["Id"], card["Id"], budget["BudgetId"], "100")
    later = utcnow() + timedelta(seconds=31)
    set_clock(lambda: later)
    response = await card_to_bank(api, user["Id"], quote["QuoteId"])
    assert response.status_code == 409
    assert response.json()["Code"] == "QUOTE_EXPIRED"


async def test_a_quote_of_the_other_direction_is_not_found(api: httpx.AsyncClient) -> None:
    user, budget, card = await loaded_card_user(api)
    other = await cardprov_quote(api, user["Id"], budget["BudgetId"], card["Id"], "10")
    response = await card_to_bank(api, user["Id"], other["QuoteId"])
    assert response.status_code == 404
    assert response.json()["Code"] == "QUOTE_NOT_FOUND"


async def test_a_card_provider_refusing_the_unload_fails_the_transfer_with_nothing_moved(
    api: httpx.AsyncClient,
) -> None:
    user, budget, card = await loaded_card_user(api)
    before = await card_balance(api, card)
    quote = await card_to_bank_quote(api, user["Id"], card["Id"], budget["BudgetId"], "100")
    await set_fault(api, "cardprov", "unload", "error", HttpStatus=409)
    response = await card_to_bank(api, user["Id"], quote["QuoteId"], key="c2b-refused")
    assert response.status_code == 409, response.text
    again = await card_to_bank(api, user["Id"], quote["QuoteId"], key="c2b-refused")
    assert again.status_code == 409
    listed = await api.get(
        TRANSFERS, params={"userId": user["Id"], "types": "CARDPROV_TO_BANKPROV"}
    )
    assert [t["Status"] for t in listed.json()["Items"]] == ["FAILED"]
    assert await card_balance(api, card) == before


async def test_a_rail_refusal_puts_the_money_back_on_the_card(api: httpx.AsyncClient) -> None:
    user, budget, card = await loaded_card_user(api)
    before = await card_balance(api, card)
    quote = await card_to_bank_quote(api, user["Id"], card["Id"], budget["BudgetId"], "100")
    await set_fault(api, "crypto", "convert", "error")
    response = await card_to_bank(api, user["Id"], quote["QuoteId"], key="c2b-rail-refused")
    assert response.status_code == 201, response.text
    assert response.json()["Status"] == "FAILED"
    assert await card_balance(api, card) == before


async def test_a_rail_timeout_stays_pending_until_reconciliation_finds_it_failed(
    app: FastAPI, api: httpx.AsyncClient, tenant: Tenant
) -> None:
    user, budget, card = await loaded_card_user(api)
    before = await card_balance(api, card)
    quote = await card_to_bank_quote(api, user["Id"], card["Id"], budget["BudgetId"], "100")
    await set_fault(api, "crypto", "convert", "timeout")
    response = await card_to_bank(api, user["Id"], quote["QuoteId"], key="c2b-timeout")
    assert response.status_code == 201, response.text
    assert response.json()["Status"] == "PENDING"
    transfer_id = response.json()["TransferId"]
    factory, providers = app.state.session_factory, app.state.providers
    report = await reconcile(factory, providers, company_id=tenant.company_id)
    assert [(p.transaction_id, p.type) for p in report.pending] == [
        (transfer_id, "CRYPTO_TRANSFER")
    ]
    # The rail fails it; its callback never arrives (nothing delivers it here).
    async with factory() as session:
        key = (
            await session.execute(
                select(CryptoTransfer.provider_key).where(CryptoTransfer.id == transfer_id)
            )
        ).scalar_one()
    conversion = await providers.crypto.conversion_by_key(
        company_id=tenant.company_id, idempotency_key=key
    )
    await providers.crypto.settle_conversion(
        company_id=tenant.company_id, conversion_id=conversion.conversion_id, completed=False
    )
    report = await reconcile(factory, providers, company_id=tenant.company_id)
    assert [(s.transaction_id, s.status) for s in report.settled] == [(transfer_id, "FAILED")]
    assert await card_balance(api, card) == before


async def test_an_unload_timeout_is_resumed_by_the_transfers_read(
    api: httpx.AsyncClient,
) -> None:
    user, budget, card = await loaded_card_user(api)
    before = await card_balance(api, card)
    quote = await card_to_bank_quote(api, user["Id"], card["Id"], budget["BudgetId"], "100")
    await set_fault(api, "cardprov", "unload", "timeout")
    response = await card_to_bank(api, user["Id"], quote["QuoteId"], key="c2b-unload-timeout")
    assert response.status_code == 201, response.text
    assert response.json()["Status"] == "PENDING"
    transfer_id = response.json()["TransferId"]
    read = await api.get(f"{TRANSFERS}/{transfer_id}", params={"userId": user["Id"]})
    assert read.json()["Status"] == "PENDING"
    assert await card_balance(api, card) == before - 100
    done = await settle_card_to_bank(api, user["Id"], transfer_id, "COMPLETED")
    assert done["Status"] == "COMPLETED"


async def test_the_transfer_list_filters_the_new_type(api: httpx.AsyncClient) -> None:
    user, budget, card = await loaded_card_user(api)
    quote = await card_to_bank_quote(api, user["Id"], card["Id"], budget["BudgetId"], "10")
    transfer = (await card_to_bank(api, user["Id"], quote["QuoteId"])).json()
    listed = await api.get(
        TRANSFERS, params={"userId": user["Id"], "types": "CARDPROV_TO_BANKPROV"}
    )
    assert [t["TransferId"] for t in listed.json()["Items"]] == [transfer["TransferId"]]
    other = await api.get(TRANSFERS, params={"userId": user["Id"], "types": "BANKPROV_TO_CARDPROV"})
    assert other.json()["Items"] == []


async def test_each_state_change_is_an_event(api: httpx.AsyncClient) -> None:
    user, budget, card = await loaded_card_user(api)
    quotes = [
        await card_to_bank_quote(api, user["Id"], card["Id"], budget["BudgetId"], "10")
        for _ in range(2)
    ]
    completed = (await card_to_bank(api, user["Id"], quotes[0]["QuoteId"])).json()
    failed = (await card_to_bank(api, user["Id"], quotes[1]["QuoteId"])).json()
    await settle_card_to_bank(api, user["Id"], completed["TransferId"], "COMPLETED")
    await settle_card_to_bank(api, user["Id"], failed["TransferId"], "FAILED")
    response = await api.get("/api/v2/events", params={"pageSize": 100})
    assert response.status_code == 200, response.text

    def types_of(transfer_id: str) -> list[str]:
        return sorted(
            e["Type"]
            for e in response.json()["Items"]
            if e["Data"].get("transferId") == transfer_id
        )

    assert types_of(completed["TransferId"]) == [
        "crypto.cardprov_to_bankprov.completed",
        "crypto.cardprov_to_bankprov.pending",
    ]
    assert types_of(failed["TransferId"]) == [
        "crypto.cardprov_to_bankprov.failed",
        "crypto.cardprov_to_bankprov.pending",
    ]


async def test_an_amount_below_one_dollar_is_400(api: httpx.AsyncClient) -> None:
    user, budget, card = await loaded_card_user(api)
    response = await api.post(
        f"{CARD_TO_BANK}/quote",
        params={"userId": user["Id"]},
        json={
            "CardId": card["Id"],
            "Amount": "0.5",
            "BudgetId": budget["BudgetId"],
            "FiatCurrency": "EUR",
        },
    )
    assert response.status_code == 400
    assert "Amount" in response.json()["ValidationErrors"]
