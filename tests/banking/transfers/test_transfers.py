"""Budget transfers and user-to-master transfers over HTTP."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from finplat.kit.clock import set_clock, utcnow
from tests.banking.steps import available, banking_user, create_budget, credit, funded_user
from tests.banking.transfers.steps import (
    master_available,
    run_refresher,
    transaction_status,
    transfer,
)
from tests.conftest import Tenant
from tests.onboarding import set_fault


async def savings_of(api: httpx.AsyncClient, amount: str = "100.00", currency: str = "EUR") -> Any:
    """A funded user, the funded default budget and an empty second budget."""
    user, main = await funded_user(api, amount, currency)
    savings = await create_budget(api, user)
    return user, main, savings


async def test_budget_to_budget_transfer_moves_the_funds(api: httpx.AsyncClient) -> None:
    user, main, savings = await savings_of(api)
    response = await transfer(
        api, user, main["BudgetId"], "30.25", DestinationBudgetId=savings["BudgetId"]
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["Status"] == "COMPLETED"
    assert body["Amount"] == 30.25
    assert body["Currency"] == "EUR"
    assert body["FromBudgetId"] == main["BudgetId"]
    assert body["ToBudgetId"] == savings["BudgetId"]
    assert body["ToMaster"] is False
    assert body["AccountId"] == user["AccountId"]
    assert body["Provider"] == "bankprov"
    assert body["CompletedAt"] is not None
    assert await available(api, user["Id"], main["BudgetId"], "EUR") == Decimal("69.75")
    assert await available(api, user["Id"], savings["BudgetId"], "EUR") == Decimal("30.25")


async def test_transfer_to_master_credits_the_company_master_account(
    api: httpx.AsyncClient,
) -> None:
    user, main = await funded_user(api, "50.00", "GBP")
    response = await transfer(api, user, main["BudgetId"], "12.5", "GBP", ToMaster=True)
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["Status"] == "COMPLETED"
    assert body["ToMaster"] is True
    assert body["ToBudgetId"] is None
    assert await master_available(api, "GBP") == Decimal("12.50")
    assert await available(api, user["Id"], main["BudgetId"], "GBP") == Decimal("37.50")


async def test_missing_user_id_is_refused(api: httpx.AsyncClient) -> None:
    user, main, savings = await savings_of(api)
    response = await api.post(
        f"/api/v2/banking/budgets/{main['BudgetId']}/transfer",
        json={
            "AccountId": user["AccountId"],
            "Amount": 1,
            "Currency": "EUR",
            "DestinationBudgetId": savings["BudgetId"],
        },
    )
    assert response.status_code == 400
    assert response.json()["Code"] == "VALIDATION_ERROR"
    assert "UserId" in response.json()["ValidationErrors"]


async def test_another_users_destination_budget_is_a_cross_account_transfer(
    api: httpx.AsyncClient,
) -> None:
    user, main = await funded_user(api)
    other = await banking_user(api)
    other_budget = (await create_budget(api, other))["BudgetId"]
    response = await transfer(api, user, main["BudgetId"], 5, DestinationBudgetId=other_budget)
    assert response.status_code == 403
    assert response.json()["Code"] == "CROSS_ACCOUNT_TRANSFER_NOT_ALLOWED"
    assert await available(api, user["Id"], main["BudgetId"], "EUR") == Decimal("1000.00")


async def test_another_users_account_is_a_cross_account_transfer(api: httpx.AsyncClient) -> None:
    user, main, savings = await savings_of(api)
    other = await banking_user(api)
    response = await transfer(
        api,
        {**user, "AccountId": other["AccountId"]},
        main["BudgetId"],
        5,
        DestinationBudgetId=savings["BudgetId"],
    )
    assert response.status_code == 403
    assert response.json()["Code"] == "CROSS_ACCOUNT_TRANSFER_NOT_ALLOWED"


async def test_another_users_source_budget_is_a_cross_account_transfer(
    api: httpx.AsyncClient,
) -> None:
    user, _main, savings = await savings_of(api)
    other, other_main = await funded_user(api)
    response = await transfer(
        api, user, other_main["BudgetId"], 5, DestinationBudgetId=savings["BudgetId"]
    )
    assert response.status_code == 403
    assert response.json()["Code"] == "CROSS_ACCOUNT_TRANSFER_NOT_ALLOWED"
    assert await available(api, other["Id"], other_main["BudgetId"], "EUR") == Decimal("1000.00")


async def test_identifiers_unknown_to_the_company_are_not_found(
    api: httpx.AsyncClient,
) -> None:
    user, main, savings = await savings_of(api)
    unknown_budget = "bud_" + "0" * 24
    cases = [
        (main["BudgetId"], {"AccountId": "bp_acc_nobody"}, "ACCOUNT_NOT_FOUND"),
        (unknown_budget, {}, "BUDGET_NOT_FOUND"),
    ]
    for source, override, code in cases:
        response = await transfer(
            api, {**user, **override}, source, 5, DestinationBudgetId=savings["BudgetId"]
        )
        assert response.status_code == 404, response.text
        assert response.json()["Code"] == code
    response = await transfer(api, user, main["BudgetId"], 5, DestinationBudgetId=unknown_budget)
    assert response.status_code == 404
    assert response.json()["Code"] == "BUDGET_NOT_FOUND"
    response = await api.post(
        f"/api/v2/banking/budgets/{main['BudgetId']}/transfer",
        params={"userId": 987_654_321},
        json={"AccountId": user["AccountId"], "Amount": 5, "Currency": "EUR", "ToMaster": True},
    )
    assert response.status_code == 404
    assert response.json()["Code"] == "USER_NOT_FOUND"


async def test_three_decimals_in_eur_is_an_invalid_transfer_request(
    api: httpx.AsyncClient,
) -> None:
    user, main, savings = await savings_of(api)
    response = await transfer(
        api, user, main["BudgetId"], "1.005", DestinationBudgetId=savings["BudgetId"]
    )
    assert response.status_code == 400
    assert response.json()["Code"] == "INVALID_TRANSFER_REQUEST"
    assert "Amount" in response.json()["ValidationErrors"]
    assert await available(api, user["Id"], main["BudgetId"], "EUR") == Decimal("100.00")


async def test_seven_decimals_in_usdc_is_an_invalid_transfer_request(
    api: httpx.AsyncClient,
) -> None:
    user, main = await funded_user(api, "10", "USDC")
    response = await transfer(api, user, main["BudgetId"], "1.0000001", "USDC", ToMaster=True)
    assert response.status_code == 400
    assert response.json()["Code"] == "INVALID_TRANSFER_REQUEST"


async def test_six_decimals_in_usdc_are_accepted(api: httpx.AsyncClient) -> None:
    user, main = await funded_user(api, "10", "USDC")
    response = await transfer(api, user, main["BudgetId"], "1.234567", "USDC", ToMaster=True)
    assert response.status_code == 201, response.text
    assert Decimal(str(response.json()["Amount"])) == Decimal("1.234567")
    assert await master_available(api, "USDC") == Decimal("1.234567")
    assert await available(api, user["Id"], main["BudgetId"], "USDC") == Decimal("8.765433")


async def test_an_amount_out_of_range_is_an_invalid_amount(api: httpx.AsyncClient) -> None:
    user, main, savings = await savings_of(api)
    response = await transfer(
        api, user, main["BudgetId"], 0, DestinationBudgetId=savings["BudgetId"]
    )
    assert response.status_code == 400
    assert response.json()["Code"] == "INVALID_AMOUNT"


async def test_reusing_an_external_reference_with_the_same_terms_returns_the_first_transfer(
    api: httpx.AsyncClient,
) -> None:
    user, main = await funded_user(api, "100.00", "EUR")
    first = await transfer(
        api, user, main["BudgetId"], 10, ToMaster=True, ExternalReferenceId="payout-2026-001"
    )
    again = await transfer(
        api, user, main["BudgetId"], 10, ToMaster=True, ExternalReferenceId="payout-2026-001"
    )
    assert first.status_code == again.status_code == 201
    assert again.json()["TransactionId"] == first.json()["TransactionId"]
    assert again.content == first.content
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert await master_available(api, "EUR") == Decimal("10.00")
    assert await available(api, user["Id"], main["BudgetId"], "EUR") == Decimal("90.00")


async def test_reusing_an_external_reference_with_other_terms_is_refused(
    api: httpx.AsyncClient,
) -> None:
    user, main = await funded_user(api, "100.00", "EUR")
    first = await transfer(
        api, user, main["BudgetId"], 10, ToMaster=True, ExternalReferenceId="r-1"
    )
    assert first.status_code == 201
    other = await transfer(
        api, user, main["BudgetId"], 11, ToMaster=True, ExternalReferenceId="r-1"
    )
    assert other.status_code == 400
    assert other.json()["Code"] == "REFERENCE_REUSED_WITH_DIFFERENT_TERMS"
    assert await master_available(api, "EUR") == Decimal("10.00")


async def test_an_external_reference_and_an_idempotency_key_work_together(
    api: httpx.AsyncClient,
) -> None:
    user, main = await funded_user(api, "100.00", "EUR")
    body: dict[str, Any] = {"ToMaster": True, "ExternalReferenceId": "r-both"}
    first = await transfer(
        api, user, main["BudgetId"], 7, headers={"Idempotency-Key": "k-1"}, **body
    )
    by_key = await transfer(
        api, user, main["BudgetId"], 7, headers={"Idempotency-Key": "k-1"}, **body
    )
    by_reference = await transfer(
        api, user, main["BudgetId"], 7, headers={"Idempotency-Key": "k-2"}, **body
    )
    assert first.status_code == 201, first.text
    assert by_key.content == by_reference.content == first.content
    assert await master_available(api, "EUR") == Decimal("7.00")


async def test_an_external_reference_needs_a_transfer_to_master(api: httpx.AsyncClient) -> None:
    user, main, savings = await savings_of(api)
    response = await transfer(
        api,
        user,
        main["BudgetId"],
        1,
        DestinationBudgetId=savings["BudgetId"],
        ExternalReferenceId="r-2",
    )
    assert response.status_code == 400
    assert response.json()["Code"] == "VALIDATION_ERROR"
    assert "ExternalReferenceId" in response.json()["ValidationErrors"]


async def test_exactly_one_destination_is_required(api: httpx.AsyncClient) -> None:
    user, main, savings = await savings_of(api)
    both = await transfer(
        api, user, main["BudgetId"], 1, DestinationBudgetId=savings["BudgetId"], ToMaster=True
    )
    neither = await transfer(api, user, main["BudgetId"], 1)
    assert both.status_code == neither.status_code == 400
    assert both.json()["Code"] == neither.json()["Code"] == "VALIDATION_ERROR"


async def test_transfer_to_the_same_budget_is_a_conflict(api: httpx.AsyncClient) -> None:
    user, main = await funded_user(api)
    response = await transfer(api, user, main["BudgetId"], 1, DestinationBudgetId=main["BudgetId"])
    assert response.status_code == 409
    assert response.json()["Code"] == "SAME_BUDGET"


async def test_a_destination_without_the_currency_is_a_conflict(api: httpx.AsyncClient) -> None:
    user, main = await funded_user(api)
    gbp_only = await create_budget(api, user, "Pounds", Currencies=["GBP"])
    response = await transfer(
        api, user, main["BudgetId"], 1, DestinationBudgetId=gbp_only["BudgetId"]
    )
    assert response.status_code == 409
    assert response.json()["Code"] == "CURRENCY_NOT_IN_BUDGET"


async def test_insufficient_funds_are_refused_and_nothing_moves(api: httpx.AsyncClient) -> None:
    user, main, savings = await savings_of(api, "20.00")
    response = await transfer(
        api, user, main["BudgetId"], "20.01", DestinationBudgetId=savings["BudgetId"]
    )
    assert response.status_code == 409
    assert response.json()["Code"] == "INSUFFICIENT_FUNDS"
    assert await available(api, user["Id"], main["BudgetId"], "EUR") == Decimal("20.00")
    assert await available(api, user["Id"], savings["BudgetId"], "EUR") == Decimal("0")
    # Nothing was bound to the reference either: it works once funds suffice.
    refused = await transfer(
        api, user, main["BudgetId"], 25, ToMaster=True, ExternalReferenceId="r-funds"
    )
    assert refused.json()["Code"] == "INSUFFICIENT_FUNDS"
    await credit(api, user["Id"], main["BudgetId"], 5)
    accepted = await transfer(
        api, user, main["BudgetId"], 25, ToMaster=True, ExternalReferenceId="r-funds"
    )
    assert accepted.status_code == 201, accepted.text


async def test_provider_timeout_leaves_it_pending_until_the_refresher_settles_it(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    user, main, savings = await savings_of(api)
    await set_fault(api, "bankprov", "transfer", "timeout")
    response = await transfer(
        api, user, main["BudgetId"], 40, DestinationBudgetId=savings["BudgetId"]
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["Status"] == "PENDING"
    assert body["CompletedAt"] is None
    # Reserved, not yet credited.
    assert await available(api, user["Id"], main["BudgetId"], "EUR") == Decimal("60.00")
    assert await available(api, user["Id"], savings["BudgetId"], "EUR") == Decimal("0")

    await run_refresher(app, tenant.company_id, body["TransactionId"])
    assert await transaction_status(app, tenant.company_id, body["TransactionId"]) == "COMPLETED"
    assert await available(api, user["Id"], main["BudgetId"], "EUR") == Decimal("60.00")
    assert await available(api, user["Id"], savings["BudgetId"], "EUR") == Decimal("40.00")


async def test_a_pending_provider_answer_completes_when_the_provider_decides(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    user, main = await funded_user(api, "100.00", "EUR")
    await set_fault(api, "bankprov", "transfer", "pending")
    response = await transfer(api, user, main["BudgetId"], 15, ToMaster=True)
    assert response.status_code == 201, response.text
    assert response.json()["Status"] == "PENDING"
    assert await master_available(api, "EUR") == Decimal(0)
    await run_refresher(app, tenant.company_id, response.json()["TransactionId"])
    assert await master_available(api, "EUR") == Decimal("15.00")


async def test_a_transfer_the_provider_never_received_fails_after_ten_minutes(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    user, main, savings = await savings_of(api)
    await set_fault(api, "bankprov", "transfer", "transient", count=3)
    response = await transfer(
        api, user, main["BudgetId"], 40, DestinationBudgetId=savings["BudgetId"]
    )
    assert response.status_code == 201, response.text
    tx_id = response.json()["TransactionId"]
    assert response.json()["Status"] == "PENDING"

    await run_refresher(app, tenant.company_id, tx_id)  # too early to give up
    assert await transaction_status(app, tenant.company_id, tx_id) == "PENDING"
    later = utcnow() + timedelta(minutes=11)
    set_clock(lambda: later)
    await run_refresher(app, tenant.company_id, tx_id)
    assert await transaction_status(app, tenant.company_id, tx_id) == "FAILED"
    assert await available(api, user["Id"], main["BudgetId"], "EUR") == Decimal("100.00")
    assert await available(api, user["Id"], savings["BudgetId"], "EUR") == Decimal("0")


async def test_a_provider_refusal_fails_the_transfer_and_releases_the_funds(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    user, main = await funded_user(api, "100.00", "EUR")
    await set_fault(api, "bankprov", "transfer", "error", HttpStatus=409)
    refused = await transfer(
        api, user, main["BudgetId"], 30, ToMaster=True, ExternalReferenceId="r-refused"
    )
    assert refused.status_code == 409
    assert refused.json()["Code"] == "PROVIDER_REJECTED"
    assert await available(api, user["Id"], main["BudgetId"], "EUR") == Decimal("100.00")
    assert await master_available(api, "EUR") == Decimal(0)
    # The refusal is the reference's answer: a retry replays it and moves nothing.
    again = await transfer(
        api, user, main["BudgetId"], 30, ToMaster=True, ExternalReferenceId="r-refused"
    )
    assert again.status_code == 409
    assert again.content == refused.content
    assert await master_available(api, "EUR") == Decimal(0)


async def test_a_retry_with_the_idempotency_key_moves_the_money_once(
    api: httpx.AsyncClient,
) -> None:
    user, main, savings = await savings_of(api)
    headers = {"Idempotency-Key": "transfer-once"}
    first = await transfer(
        api, user, main["BudgetId"], 5, DestinationBudgetId=savings["BudgetId"], headers=headers
    )
    again = await transfer(
        api, user, main["BudgetId"], 5, DestinationBudgetId=savings["BudgetId"], headers=headers
    )
    assert first.status_code == again.status_code == 201
    assert again.content == first.content
    assert await available(api, user["Id"], savings["BudgetId"], "EUR") == Decimal("5.00")


async def test_a_retry_after_a_crash_resumes_the_transfer_without_moving_twice(
    api: httpx.AsyncClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    user, main = await funded_user(api, "100.00", "EUR")
    banking = app.state.providers.banking
    real_transfer = banking.transfer
    calls: list[str] = []

    async def done_then_crash(**kwargs: Any) -> Any:
        calls.append(kwargs["idempotency_key"])
        result = await real_transfer(**kwargs)
        if len(calls) == 1:
            raise RuntimeError("the process died after the provider moved the money")
        return result

    monkeypatch.setattr(banking, "transfer", done_then_crash)
    body: dict[str, Any] = {"ToMaster": True, "ExternalReferenceId": "r-crash"}
    crashed = await transfer(
        api, user, main["BudgetId"], 25, headers={"Idempotency-Key": "a"}, **body
    )
    assert crashed.status_code == 500
    # Retried under another key, with the same reference: the reference resumes the transfer.
    retry = await transfer(
        api, user, main["BudgetId"], 25, headers={"Idempotency-Key": "b"}, **body
    )
    assert retry.status_code == 201, retry.text
    assert retry.json()["Status"] == "COMPLETED"
    assert calls[0] == calls[1]  # the provider saw the same key, so it moved the money once
    assert await master_available(api, "EUR") == Decimal("25.00")
    assert await available(api, user["Id"], main["BudgetId"], "EUR") == Decimal("75.00")
