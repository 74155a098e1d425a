"""Payouts to verified payees: check, the initiate-verify-create flow, and what the provider's
batches do to them (through the sandbox, over HTTP)."""

from __future__ import annotations

from decimal import Decimal

import httpx

from tests.banking.payees.steps import verified_payee
from tests.banking.payouts.steps import (
    PAYOUTS,
    approved,
    balance,
    cancel_order,
    check,
    create,
    events_of,
    get_payout,
    move_batch,
    move_payout,
    pay,
    payout_setup,
    terms,
    verify,
)
from tests.banking.steps import banking_user, create_budget, credit, default_budget

# 100 EUR paid from GBP: EUR per GBP = 1.27 / 1.08 less 0.5%, cut to 6 places; the GBP debit
# is rounded up to the penny.
GBP_TO_EUR_RATE = Decimal("1.170046")
GBP_FOR_100_EUR = Decimal("85.47")


async def test_check_prices_the_payout_and_finds_no_problem_when_funded(
    api: httpx.AsyncClient,
) -> None:
    user, budget, payee = await payout_setup(api, "500.00")
    response = await check(api, user, terms(user, budget, payee, 120.5))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["Ok"] is True
    assert body["Problems"] == []
    assert Decimal(str(body["Amount"])) == Decimal("120.50")
    assert (body["Currency"], body["DebitCurrency"], body["FeeCurrency"]) == ("EUR",) * 3
    assert Decimal(str(body["DebitAmount"])) == Decimal("120.50")
    assert body["Fee"] == 0
    assert body["ExchangeRate"] == 1
    assert (await balance(api, user, budget["BudgetId"], "EUR"))["Available"] == 500


async def test_a_payout_without_user_id_is_for_the_accounts_holder(
    api: httpx.AsyncClient,
) -> None:
    user, budget, payee = await payout_setup(api)
    body = terms(user, budget, payee)
    checked = await api.post(f"{PAYOUTS}/check", json=body)
    assert (checked.status_code, checked.json()["Ok"]) == (200, True)
    initiated = await api.post(f"{PAYOUTS}/initiate", json=body)
    assert initiated.status_code == 201, initiated.text
    challenge = initiated.json()
    assert challenge["UserId"] == user["Id"]
    verified = await verify(api, user, challenge["ApprovalId"], challenge["VerificationToken"])
    assert verified.status_code == 200, verified.text
    created = await api.post(PAYOUTS, json={**body, "ApprovalId": challenge["ApprovalId"]})
    assert created.status_code == 201, created.text
    assert created.json()["UserId"] == user["Id"]


async def test_a_payout_naming_another_user_than_the_accounts_is_account_not_found(
    api: httpx.AsyncClient,
) -> None:
    user, budget, payee = await payout_setup(api)
    other = await banking_user(api)
    response = await api.post(
        f"{PAYOUTS}/initiate", params={"userId": other["Id"]}, json=terms(user, budget, payee)
    )
    assert (response.status_code, response.json()["Code"]) == (404, "ACCOUNT_NOT_FOUND")


async def test_a_payout_without_user_id_for_an_unknown_account_is_account_not_found(
    api: httpx.AsyncClient,
) -> None:
    user, budget, payee = await payout_setup(api)
    body = terms(user, budget, payee, AccountId="bp_acc_" + "0" * 24)
    response = await api.post(f"{PAYOUTS}/initiate", json=body)
    assert (response.status_code, response.json()["Code"]) == (404, "ACCOUNT_NOT_FOUND")


async def test_check_reports_insufficient_funds_as_a_problem(api: httpx.AsyncClient) -> None:
    user, budget, payee = await payout_setup(api, "50.00")
    response = await check(api, user, terms(user, budget, payee, 50.01))
    assert response.status_code == 200, response.text
    assert response.json()["Ok"] is False
    assert response.json()["Problems"] == ["INSUFFICIENT_FUNDS"]


async def test_check_prices_a_conversion_from_the_funding_currency(
    api: httpx.AsyncClient,
) -> None:
    user, budget, payee = await payout_setup(api, "500.00", "GBP")
    response = await check(api, user, terms(user, budget, payee, 100, FromCurrency="GBP"))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["DebitCurrency"] == "GBP"
    assert Decimal(str(body["ExchangeRate"])) == GBP_TO_EUR_RATE
    assert Decimal(str(body["DebitAmount"])) == GBP_FOR_100_EUR
    assert body["Ok"] is True


async def test_a_created_payout_is_pending_in_a_batch_with_its_funds_reserved(
    api: httpx.AsyncClient,
) -> None:
    user, budget, payee = await payout_setup(api, "1000.00")
    body = terms(user, budget, payee, 250, Reference="Invoice 117")
    payout = await pay(api, user, body)
    assert payout["Status"] == "PENDING"
    assert payout["StatusReason"] is None
    assert payout["PaymentBatchId"].startswith("bp_bat_")
    assert payout["PayoutId"] == payout["TransactionId"]
    assert (payout["PayeeId"], payout["BudgetId"], payout["AccountId"]) == (
        payee["PayeeId"],
        budget["BudgetId"],
        user["AccountId"],
    )
    assert payout["Reference"] == "Invoice 117"
    assert payout["CompletedAt"] is None
    held = await balance(api, user, budget["BudgetId"], "EUR")
    assert held == {"Posted": 1000, "PendingDebits": 250, "Available": 750}
    assert (await get_payout(api, user, payout["PayoutId"]))["Status"] == "PENDING"


async def test_a_batch_entering_processing_emits_paymentbatch_processing(
    api: httpx.AsyncClient,
) -> None:
    user, budget, payee = await payout_setup(api)
    payout = await pay(api, user, terms(user, budget, payee, 10))
    response = await move_batch(api, payout["PaymentBatchId"], "PROCESSING")
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "PROCESSING"
    assert [p["Status"] for p in response.json()["Payouts"]] == ["PENDING"]
    [event] = await events_of(api, "paymentbatch.processing")
    assert event["Domain"] == "paymentbatch"
    assert event["Provider"] == "bankprov"
    assert event["Data"]["batchId"] == payout["PaymentBatchId"]
    assert event["Data"]["status"] == "PROCESSING"
    assert event["Data"]["transactionIds"] == [payout["TransactionId"]]
    assert event["Data"]["userIds"] == [user["Id"]]


async def test_a_completed_batch_posts_the_payout(api: httpx.AsyncClient) -> None:
    user, budget, payee = await payout_setup(api, "1000.00")
    payout = await pay(api, user, terms(user, budget, payee, 300))
    await move_batch(api, payout["PaymentBatchId"], "PROCESSING")
    response = await move_batch(api, payout["PaymentBatchId"], "COMPLETED")
    assert response.status_code == 200, response.text
    [done] = response.json()["Payouts"]
    assert done["Status"] == "COMPLETED"
    assert done["CompletedAt"] is not None
    held = await balance(api, user, budget["BudgetId"], "EUR")
    assert held == {"Posted": 700, "PendingDebits": 0, "Available": 700}
    [event] = await events_of(api, "payout.completed")
    assert event["Domain"] == "payout"
    assert event["Data"]["payoutId"] == payout["PayoutId"]


async def test_a_failed_payment_releases_the_funds(api: httpx.AsyncClient) -> None:
    user, budget, payee = await payout_setup(api, "1000.00")
    payout = await pay(api, user, terms(user, budget, payee, 300))
    response = await move_payout(api, payout["PayoutId"], "FAILED")
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "FAILED"
    assert response.json()["StatusReason"] == "RETURNED_BY_BENEFICIARY_BANK"
    held = await balance(api, user, budget["BudgetId"], "EUR")
    assert held == {"Posted": 1000, "PendingDebits": 0, "Available": 1000}
    [event] = await events_of(api, "payout.failed")
    assert event["Data"]["reason"] == "RETURNED_BY_BENEFICIARY_BANK"
    again = await move_payout(api, payout["PayoutId"], "COMPLETED")
    assert again.status_code == 409
    assert again.json()["Code"] == "PAYOUT_NOT_PENDING"


async def test_a_cancelled_batch_fails_its_payouts(api: httpx.AsyncClient) -> None:
    user, budget, payee = await payout_setup(api, "100.00")
    payout = await pay(api, user, terms(user, budget, payee, 100))
    response = await move_batch(api, payout["PaymentBatchId"], "CANCELLED")
    assert response.status_code == 200, response.text
    assert [p["Status"] for p in response.json()["Payouts"]] == ["FAILED"]
    assert (await balance(api, user, budget["BudgetId"], "EUR"))["Available"] == 100
    again = await move_batch(api, payout["PaymentBatchId"], "PROCESSING")
    assert again.status_code == 409


async def test_paying_an_eur_payee_from_gbp_debits_gbp(api: httpx.AsyncClient) -> None:
    user, budget, payee = await payout_setup(api, "500.00", "GBP")
    await credit(api, user["Id"], budget["BudgetId"], "40.00", "EUR")
    payout = await pay(api, user, terms(user, budget, payee, 100, FromCurrency="GBP"))
    assert (payout["Amount"], payout["Currency"]) == (100, "EUR")
    assert payout["DebitCurrency"] == "GBP"
    assert Decimal(str(payout["DebitAmount"])) == GBP_FOR_100_EUR
    gbp = await balance(api, user, budget["BudgetId"], "GBP")
    assert gbp["PendingDebits"] == GBP_FOR_100_EUR
    assert gbp["Available"] == Decimal("500.00") - GBP_FOR_100_EUR
    assert (await balance(api, user, budget["BudgetId"], "EUR"))["Available"] == 40
    await move_batch(api, payout["PaymentBatchId"], "COMPLETED")
    gbp = await balance(api, user, budget["BudgetId"], "GBP")
    assert gbp["Posted"] == Decimal("500.00") - GBP_FOR_100_EUR


async def test_cancelling_the_fx_order_fails_the_payout_and_returns_the_funds(
    api: httpx.AsyncClient,
) -> None:
    user, budget, payee = await payout_setup(api, "500.00", "GBP")
    payout = await pay(api, user, terms(user, budget, payee, 100, FromCurrency="GBP"))
    response = await cancel_order(api, payout["PaymentBatchId"])
    assert response.status_code == 200, response.text
    batch = response.json()
    assert batch["FxOrderStatus"] == "CANCELLED"
    assert [(p["Status"], p["StatusReason"]) for p in batch["Payouts"]] == [
        ("FAILED", "FX_ORDER_CANCELLED")
    ]
    assert await balance(api, user, budget["BudgetId"], "GBP") == {
        "Posted": 500,
        "PendingDebits": 0,
        "Available": 500,
    }
    [event] = await events_of(api, "paymentbatchorder.cancelled")
    assert event["Domain"] == "paymentbatchorder"
    assert event["Provider"] == "bankprov"
    assert event["Data"]["batchId"] == payout["PaymentBatchId"]
    assert event["Data"]["orderId"] == batch["FxOrderId"]
    assert event["Data"]["orderId"].startswith("bp_ord_")
    assert event["Data"]["transactionIds"] == [payout["TransactionId"]]


async def test_a_batch_without_conversion_has_no_order_to_cancel(api: httpx.AsyncClient) -> None:
    user, budget, payee = await payout_setup(api)
    payout = await pay(api, user, terms(user, budget, payee, 10))
    response = await cancel_order(api, payout["PaymentBatchId"])
    assert response.status_code == 409


async def test_idempotency_key_replay_returns_the_same_payout(api: httpx.AsyncClient) -> None:
    user, budget, payee = await payout_setup(api, "1000.00")
    body = terms(user, budget, payee, 100)
    approval = await approved(api, user, body)
    first = await create(api, user, body, approval["ApprovalId"], **{"Idempotency-Key": "po-1"})
    again = await create(api, user, body, approval["ApprovalId"], **{"Idempotency-Key": "po-1"})
    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["PayoutId"] == first.json()["PayoutId"]
    assert (await balance(api, user, budget["BudgetId"], "EUR"))["Available"] == 900


async def test_the_payee_must_be_paid_in_its_currency(api: httpx.AsyncClient) -> None:
    user, budget, payee = await payout_setup(api)
    response = await check(api, user, terms(user, budget, payee, 10, currency="GBP"))
    assert response.status_code == 409
    assert response.json()["Code"] == "PAYEE_CURRENCY_MISMATCH"


async def test_the_budget_must_hold_the_funding_currency(api: httpx.AsyncClient) -> None:
    user, _, payee = await payout_setup(api)
    euros = await create_budget(api, user, "Euros", Currencies=["EUR"])
    response = await check(api, user, terms(user, euros, payee, 10, FromCurrency="GBP"))
    assert response.status_code == 409
    assert response.json()["Code"] == "CURRENCY_NOT_IN_BUDGET"


async def test_another_users_budget_or_payout_is_not_found(api: httpx.AsyncClient) -> None:
    user, budget, payee = await payout_setup(api)
    other = await banking_user(api)
    theirs = await default_budget(api, other["Id"])
    response = await check(api, user, terms(user, theirs, payee, 10))
    assert response.status_code == 404
    assert response.json()["Code"] == "BUDGET_NOT_FOUND"
    payout = await pay(api, user, terms(user, budget, payee, 10))
    hidden = await api.get(
        f"/api/v2/banking/payouts/{payout['PayoutId']}", params={"userId": other["Id"]}
    )
    assert hidden.status_code == 404
    assert hidden.json()["Code"] == "PAYOUT_NOT_FOUND"
    other_payee = await verified_payee(api, other)
    response = await check(api, user, terms(user, budget, other_payee, 10))
    assert response.status_code == 404
    assert response.json()["Code"] == "PAYEE_NOT_FOUND"


async def test_an_amount_beyond_the_currencys_decimals_is_invalid(api: httpx.AsyncClient) -> None:
    user, budget, payee = await payout_setup(api)
    response = await check(api, user, terms(user, budget, payee, 10.001))
    assert response.status_code == 400
    assert response.json()["Code"] == "INVALID_AMOUNT"
    response = await check(api, user, terms(user, budget, payee, 0))
    assert response.status_code == 400
    assert response.json()["Code"] == "INVALID_AMOUNT"
