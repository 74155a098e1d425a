"""Payout approvals: a payout needs its verified, unexpired, unused approval of exactly its
terms; the one-time token is counted and locks after five wrong tries."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

from finplat.kit.clock import set_clock
from tests.banking.payouts.steps import (
    approved,
    balance,
    create,
    initiate,
    initiated,
    pay,
    payout_setup,
    terms,
    verify,
)
from tests.banking.steps import banking_user
from tests.conftest import TenantFactory

WRONG_TOKEN = "ZZZZZZZZ"


async def test_initiate_answers_an_approval_awaiting_verification(
    api: httpx.AsyncClient,
) -> None:
    user, budget, payee = await payout_setup(api)
    before = datetime.now(UTC)
    challenge = await initiated(api, user, terms(user, budget, payee, 25))
    assert challenge["ApprovalId"].startswith("pap_")
    assert len(challenge["ApprovalId"]) == 28
    assert challenge["Status"] == "AWAITING_VERIFICATION"
    assert len(challenge["VerificationToken"]) == 8
    expires = datetime.fromisoformat(challenge["ExpiresAt"])
    assert timedelta(minutes=9) < expires - before <= timedelta(minutes=10, seconds=5)
    assert challenge["Amount"] == 25
    assert challenge["DebitAmount"] == 25
    read = await api.get(
        f"/api/v2/banking/payouts/approvals/{challenge['ApprovalId']}",
        params={"userId": user["Id"]},
    )
    assert read.status_code == 200, read.text
    assert "VerificationToken" not in read.json()
    assert read.json()["Status"] == "AWAITING_VERIFICATION"
    # Initiating changes no balance.
    assert (await balance(api, user, budget["BudgetId"], "EUR"))["Available"] == 1000


async def test_insufficient_funds_at_initiate_is_409(api: httpx.AsyncClient) -> None:
    user, budget, payee = await payout_setup(api, "20.00")
    response = await initiate(api, user, terms(user, budget, payee, 20.01))
    assert response.status_code == 409
    assert response.json()["Code"] == "INSUFFICIENT_FUNDS"


async def test_create_without_a_verified_approval_is_a_conflict(api: httpx.AsyncClient) -> None:
    user, budget, payee = await payout_setup(api)
    body = terms(user, budget, payee, 10)
    challenge = await initiated(api, user, body)
    response = await create(api, user, body, challenge["ApprovalId"])
    assert response.status_code == 409
    assert response.json()["Code"] == "APPROVAL_NOT_VERIFIED"
    assert (await balance(api, user, budget["BudgetId"], "EUR"))["PendingDebits"] == 0


async def test_create_with_changed_terms_is_a_conflict(api: httpx.AsyncClient) -> None:
    user, budget, payee = await payout_setup(api)
    body = terms(user, budget, payee, 10)
    approval = await approved(api, user, body)
    for changed in ({"Amount": 11}, {"Reference": "Other"}, {"FromCurrency": "GBP"}):
        response = await create(api, user, {**body, **changed}, approval["ApprovalId"])
        assert response.status_code == 409, changed
        assert response.json()["Code"] == "APPROVAL_TERMS_MISMATCH"
    # The same terms, with the funding currency spelt out, are the approved ones.
    response = await create(api, user, {**body, "FromCurrency": "EUR"}, approval["ApprovalId"])
    assert response.status_code == 201, response.text


async def test_an_approval_cannot_be_used_twice(api: httpx.AsyncClient) -> None:
    user, budget, payee = await payout_setup(api)
    body = terms(user, budget, payee, 10)
    approval = await approved(api, user, body)
    first = await create(api, user, body, approval["ApprovalId"])
    assert first.status_code == 201, first.text
    second = await create(api, user, body, approval["ApprovalId"])
    assert second.status_code == 409
    assert second.json()["Code"] == "APPROVAL_ALREADY_USED"
    assert (await balance(api, user, budget["BudgetId"], "EUR"))["PendingDebits"] == 10
    read = await api.get(
        f"/api/v2/banking/payouts/approvals/{approval['ApprovalId']}",
        params={"userId": user["Id"]},
    )
    assert read.json()["Status"] == "USED"
    assert read.json()["PayoutId"] == first.json()["PayoutId"]


async def test_an_expired_approval_cannot_be_verified_or_used(api: httpx.AsyncClient) -> None:
    user, budget, payee = await payout_setup(api)
    body = terms(user, budget, payee, 10)
    waiting = await initiated(api, user, body)
    verified = await approved(api, user, body)
    later = datetime.now(UTC) + timedelta(minutes=11)
    set_clock(lambda: later)
    response = await verify(api, user, waiting["ApprovalId"], waiting["VerificationToken"])
    assert response.status_code == 409
    assert response.json()["Code"] == "APPROVAL_EXPIRED"
    response = await create(api, user, body, verified["ApprovalId"])
    assert response.status_code == 409
    assert response.json()["Code"] == "APPROVAL_EXPIRED"
    read = await api.get(
        f"/api/v2/banking/payouts/approvals/{verified['ApprovalId']}",
        params={"userId": user["Id"]},
    )
    assert read.json()["Status"] == "EXPIRED"


async def test_a_wrong_token_is_refused_and_the_fifth_locks_the_approval(
    api: httpx.AsyncClient,
) -> None:
    user, budget, payee = await payout_setup(api)
    body = terms(user, budget, payee, 10)
    challenge = await initiated(api, user, body)
    for _ in range(4):
        response = await verify(api, user, challenge["ApprovalId"], WRONG_TOKEN)
        assert response.status_code == 403
        assert response.json()["Code"] == "INVALID_VERIFICATION_TOKEN"
    response = await verify(api, user, challenge["ApprovalId"], WRONG_TOKEN)
    assert response.status_code == 409
    assert response.json()["Code"] == "APPROVAL_LOCKED"
    response = await verify(api, user, challenge["ApprovalId"], challenge["VerificationToken"])
    assert response.status_code == 409
    assert response.json()["Code"] == "APPROVAL_LOCKED"
    response = await create(api, user, body, challenge["ApprovalId"])
    assert response.status_code == 409
    assert response.json()["Code"] == "APPROVAL_LOCKED"


async def test_an_approval_of_another_user_or_company_is_not_found(
    make_tenant: TenantFactory,
) -> None:
    a, b = await make_tenant("A"), await make_tenant("B")
    user, budget, payee = await payout_setup(a.client)
    body = terms(user, budget, payee, 10)
    challenge = await initiated(a.client, user, body)
    other = await banking_user(a.client)
    response = await verify(
        a.client, other, challenge["ApprovalId"], challenge["VerificationToken"]
    )
    assert response.status_code == 404
    assert response.json()["Code"] == "APPROVAL_NOT_FOUND"
    b_user, b_budget, b_payee = await payout_setup(b.client)
    theirs = await initiated(b.client, b_user, terms(b_user, b_budget, b_payee, 10))
    response = await create(a.client, user, body, theirs["ApprovalId"])
    assert response.status_code == 404
    assert response.json()["Code"] == "APPROVAL_NOT_FOUND"


async def test_another_companys_batch_and_payout_are_not_found(
    make_tenant: TenantFactory,
) -> None:
    a, b = await make_tenant("A"), await make_tenant("B")
    user, budget, payee = await payout_setup(a.client)
    payout = await pay(a.client, user, terms(user, budget, payee, 10))
    moved = await b.client.post(
        f"/api/v2/sandbox/banking/payment-batches/{payout['PaymentBatchId']}/status",
        json={"Status": "PROCESSING"},
    )
    assert moved.status_code == 404
    assert moved.json()["Code"] == "PAYMENT_BATCH_NOT_FOUND"
    moved = await b.client.post(
        f"/api/v2/sandbox/banking/payouts/{payout['PayoutId']}/status",
        json={"Status": "COMPLETED"},
    )
    assert moved.status_code == 404
    assert moved.json()["Code"] == "PAYOUT_NOT_FOUND"


async def test_verifying_again_with_the_right_token_answers_the_verified_approval(
    api: httpx.AsyncClient,
) -> None:
    user, budget, payee = await payout_setup(api)
    challenge = await initiated(api, user, terms(user, budget, payee, 10))
    token = challenge["VerificationToken"]
    first = await verify(api, user, challenge["ApprovalId"], token)
    again = await verify(api, user, challenge["ApprovalId"], token)
    assert first.status_code == again.status_code == 200
    assert again.json()["Status"] == "VERIFIED"
    assert again.json()["VerifiedAt"] == first.json()["VerifiedAt"]
