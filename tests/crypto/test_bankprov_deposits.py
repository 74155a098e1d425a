"""Crypto to fiat: exchange quotes accepted once within their lifetime, the bankprov deposit
pending until the rail decides, the fee and rate on the transfer, the ledger either way."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import httpx

from finplat.kit.clock import set_clock, utcnow
from tests.banking.steps import available
from tests.crypto.steps import (
    accept,
    crypto_balance,
    crypto_banking_user,
    exchange_quote,
    settle_conversion,
)
from tests.onboarding import set_fault

STATUS = "/api/v2/crypto-virtual-accounts/bankprov-deposits"


async def test_a_quote_prices_the_sale_with_its_fee_and_rate(api: httpx.AsyncClient) -> None:
    user, budget = await crypto_banking_user(api)
    quote = await exchange_quote(api, user["Id"], budget["BudgetId"], "100", "EUR")
    assert quote["Status"] == "OPEN"
    assert Decimal(str(quote["Fee"])) == Decimal("0.5")  # 0.5 % of 100
    rate = Decimal(quote["ExchangeRate"])
    assert rate == Decimal("0.92361111")  # 1 / 1.08 less the 0.25 % spread, rounded down
    # 99.5 sold at the rate, rounded down to the cent.
    assert Decimal(str(quote["FiatAmount"])) == Decimal("91.89")


async def test_the_fee_rounds_up_to_the_coins_cent(api: httpx.AsyncClient) -> None:
    user, budget = await crypto_banking_user(api)
    quote = await exchange_quote(api, user["Id"], budget["BudgetId"], "1.000001", "USD")
    assert Decimal(str(quote["Fee"])) == Decimal("0.01")


async def test_an_accepted_quote_is_pending_with_the_amount_reserved(
    api: httpx.AsyncClient,
) -> None:
    user, budget = await crypto_banking_user(api)
    quote = await exchange_quote(api, user["Id"], budget["BudgetId"], "40")
    response = await accept(api, user["Id"], quote["QuoteId"])
    assert response.status_code == 201, response.text
    transfer = response.json()
    assert transfer["Status"] == "PENDING"
    assert transfer["Type"] == "BANKPROV_DEPOSIT"
    assert Decimal(str(transfer["FeeAmount"])) == Decimal("0.2")
    assert transfer["FeeCurrency"] == "USDC"
    assert transfer["ExchangeRate"] == quote["ExchangeRate"]
    assert transfer["FiatAmount"] == quote["FiatAmount"]
    balance = await crypto_balance(api, user["Id"])
    assert Decimal(str(balance["Available"])) == 60
    assert Decimal(str(balance["PendingDebits"])) == 40


async def test_a_completed_conversion_credits_the_budget_and_posts_the_debit(
    api: httpx.AsyncClient,
) -> None:
    user, budget = await crypto_banking_user(api)
    quote = await exchange_quote(api, user["Id"], budget["BudgetId"], "100", "EUR")
    transfer = (await accept(api, user["Id"], quote["QuoteId"])).json()
    done = await settle_conversion(api, user["Id"], transfer["TransferId"], "COMPLETED")
    assert done["Status"] == "COMPLETED"
    assert done["CompletedAt"] is not None
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("91.89")
    balance = await crypto_balance(api, user["Id"])
    assert Decimal(str(balance["Posted"])) == 0
    assert Decimal(str(balance["PendingDebits"])) == 0
    status = await api.get(f"{STATUS}/{transfer['TransferId']}", params={"userId": user["Id"]})
    assert status.json()["Status"] == "COMPLETED"


async def test_a_failed_conversion_gives_the_coins_back(api: httpx.AsyncClient) -> None:
    user, budget = await crypto_banking_user(api)
    quote = await exchange_quote(api, user["Id"], budget["BudgetId"], "30")
    transfer = (await accept(api, user["Id"], quote["QuoteId"], path="bankprov-deposits")).json()
    failed = await settle_conversion(api, user["Id"], transfer["TransferId"], "FAILED")
    assert failed["Status"] == "FAILED"
    assert failed["StatusReason"]
    balance = await crypto_balance(api, user["Id"])
    assert Decimal(str(balance["Available"])) == 100
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == 0


async def test_a_quote_is_accepted_once(api: httpx.AsyncClient) -> None:
    user, budget = await crypto_banking_user(api)
    quote = await exchange_quote(api, user["Id"], budget["BudgetId"], "10")
    first = await accept(api, user["Id"], quote["QuoteId"], key="cx-1")
    assert first.status_code == 201
    again = await accept(api, user["Id"], quote["QuoteId"], key="cx-2", path="bankprov-deposits")
    assert again.status_code == 409
    assert again.json()["Code"] == "QUOTE_ALREADY_ACCEPTED"
    assert Decimal(str((await crypto_balance(api, user["Id"]))["Available"])) == 90


async def test_a_retry_with_the_same_key_answers_the_first_acceptance(
    api: httpx.AsyncClient,
) -> None:
    user, budget = await crypto_banking_user(api)
    quote = await exchange_quote(api, user["Id"], budget["BudgetId"], "10")
    first = await accept(api, user["Id"], quote["QuoteId"], key="cx-same")
    again = await accept(api, user["Id"], quote["QuoteId"], key="cx-same")
    assert again.status_code == 201
    assert again.json() == first.json()


async def test_an_expired_quote_cannot_be_accepted(api: httpx.AsyncClient) -> None:
    user, budget = await crypto_banking_user(api)
    quote = await exchange_quote(api, user["Id"], budget["BudgetId"], "10")
    later = utcnow() + timedelta(seconds=31)
    set_clock(lambda: later)
    response = await accept(api, user["Id"], quote["QuoteId"])
    assert response.status_code == 409
    assert response.json()["Code"] == "QUOTE_EXPIRED"
    assert Decimal(str((await crypto_balance(api, user["Id"]))["Available"])) == 100


async def test_more_than_the_balance_is_409_and_leaves_the_quote_open(
    api: httpx.AsyncClient,
) -> None:
    user, budget = await crypto_banking_user(api, "20")
    quote = await exchange_quote(api, user["Id"], budget["BudgetId"], "25")
    response = await accept(api, user["Id"], quote["QuoteId"])
    assert response.status_code == 409
    assert response.json()["Code"] == "INSUFFICIENT_FUNDS"
    assert Decimal(str((await crypto_balance(api, user["Id"]))["Available"])) == 20


async def test_another_users_quote_is_404(api: httpx.AsyncClient) -> None:
    user, budget = await crypto_banking_user(api)
    other, _ = await crypto_banking_user(api)
    quote = await exchange_quote(api, user["Id"], budget["BudgetId"], "10")
    response = await accept(api, other["Id"], quote["QuoteId"])
    assert response.status_code == 404
    assert response.json()["Code"] == "QUOTE_NOT_FOUND"


async def test_a_budget_of_another_user_is_404(api: httpx.AsyncClient) -> None:
    user, _ = await crypto_banking_user(api)
    _, other_budget = await crypto_banking_user(api)
    response = await api.post(
        "/api/v2/crypto-virtual-accounts/exchange/quote",
        params={"userId": user["Id"]},
        json={
            "CryptoCurrency": "USDC",
            "Amount": 10,
            "FiatCurrency": "EUR",
            "BudgetId": other_budget["BudgetId"],
        },
    )
    assert response.status_code == 404
    assert response.json()["Code"] == "BUDGET_NOT_FOUND"


async def test_a_rail_timeout_leaves_the_transfer_pending_and_a_read_finds_it(
    api: httpx.AsyncClient,
) -> None:
    user, budget = await crypto_banking_user(api)
    quote = await exchange_quote(api, user["Id"], budget["BudgetId"], "10")
    await set_fault(api, "crypto", "convert", "timeout")
    response = await accept(api, user["Id"], quote["QuoteId"], key="cx-timeout")
    assert response.status_code == 201, response.text
    assert response.json()["Status"] == "PENDING"
    transfer_id = response.json()["TransferId"]
    # The read asks the rail by key: it started the conversion, still pending.
    read = await api.get(f"{STATUS}/{transfer_id}", params={"userId": user["Id"]})
    assert read.json()["Status"] == "PENDING"
    done = await settle_conversion(api, user["Id"], transfer_id, "COMPLETED")
    assert done["Status"] == "COMPLETED"


async def test_a_rail_refusal_fails_the_transfer_and_releases_the_coins(
    api: httpx.AsyncClient,
) -> None:
    user, budget = await crypto_banking_user(api)
    quote = await exchange_quote(api, user["Id"], budget["BudgetId"], "10")
    await set_fault(api, "crypto", "convert", "error")
    response = await accept(api, user["Id"], quote["QuoteId"], key="cx-refused")
    assert response.status_code == 422, response.text
    assert Decimal(str((await crypto_balance(api, user["Id"]))["Available"])) == 100
    again = await accept(api, user["Id"], quote["QuoteId"], key="cx-refused")
    assert again.status_code == 422


async def test_the_transfer_list_filters_by_type_and_status(api: httpx.AsyncClient) -> None:
    user, budget = await crypto_banking_user(api)
    first = await exchange_quote(api, user["Id"], budget["BudgetId"], "10")
    second = await exchange_quote(api, user["Id"], budget["BudgetId"], "20")
    done = (await accept(api, user["Id"], first["QuoteId"])).json()
    open_ = (await accept(api, user["Id"], second["QuoteId"])).json()
    await settle_conversion(api, user["Id"], done["TransferId"], "COMPLETED")
    transfers = "/api/v2/crypto-virtual-accounts/transfers"
    every = (await api.get(transfers, params={"userId": user["Id"]})).json()["Items"]
    assert [t["TransferId"] for t in every] == [open_["TransferId"], done["TransferId"]]
    pending = await api.get(
        transfers,
        params={"userId": user["Id"], "types": "BANKPROV_DEPOSIT", "statuses": "PENDING"},
    )
    assert [t["TransferId"] for t in pending.json()["Items"]] == [open_["TransferId"]]
    one = await api.get(f"{transfers}/{done['TransferId']}", params={"userId": user["Id"]})
    assert one.json()["Status"] == "COMPLETED"
