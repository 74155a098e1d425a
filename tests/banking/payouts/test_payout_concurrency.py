"""Real parallel payouts against PostgreSQL (skipped on SQLite, whose single writer makes these
races impossible by construction): the budget is never overdrawn, an approval pays once and its
verification token cannot be guessed more often than allowed."""

from __future__ import annotations

import asyncio
from collections import Counter
from decimal import Decimal
from typing import Any

import httpx
import pytest

from finplat.banking.payouts.approvals import MAX_ATTEMPTS
from finplat.ledger.verification import verify
from finplat.providers.banking.sandbox.payments import SandboxPayments
from tests.banking.payouts.steps import (
    approved,
    balance,
    cancel_order,
    create,
    get_payout,
    initiated,
    move_payout,
    pay,
    payout_setup,
    terms,
)
from tests.banking.payouts.steps import verify as verify_approval
from tests.databases import backend
from tests.isolated import isolated

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")


def _outcomes(responses: list[httpx.Response]) -> Counter[tuple[int, str]]:
    return Counter(
        (r.status_code, r.json()["Status"] if r.status_code == 201 else r.json()["Code"])
        for r in responses
    )


async def test_parallel_payouts_never_overdraw_the_budget() -> None:
    async with isolated("payouts", database_pool_size=30, sandbox_latency_ms=20) as env:
        api = env.client
        user, budget, payee = await payout_setup(api, "100.00")
        body = terms(user, budget, payee, 10)
        approvals = [await approved(api, user, body) for _ in range(14)]
        responses = await asyncio.gather(
            *(
                create(api, user, body, a["ApprovalId"], **{"Idempotency-Key": f"p-{i}"})
                for i, a in enumerate(approvals)
            )
        )
        outcomes = _outcomes(list(responses))
        assert outcomes == {(201, "PENDING"): 10, (409, "INSUFFICIENT_FUNDS"): 4}, outcomes
        assert await balance(api, user, budget["BudgetId"], "EUR") == {
            "Posted": Decimal("100.00"),
            "PendingDebits": Decimal("100.00"),
            "Available": Decimal(0),
        }
        async with env.app.state.session_factory() as session:
            report = await verify(session)
            assert report.ok, report.summary()


async def test_one_approval_sent_in_parallel_pays_once() -> None:
    async with isolated("payouts", database_pool_size=30, sandbox_latency_ms=20) as env:
        api = env.client
        user, budget, payee = await payout_setup(api, "100.00")
        body = terms(user, budget, payee, 30)
        approval = await approved(api, user, body)
        responses = await asyncio.gather(
            *(
                create(api, user, body, approval["ApprovalId"], **{"Idempotency-Key": f"p-{i}"})
                for i in range(12)
            )
        )
        outcomes = _outcomes(list(responses))
        assert outcomes == {(201, "PENDING"): 1, (409, "APPROVAL_ALREADY_USED"): 11}, outcomes
        assert (await balance(api, user, budget["BudgetId"], "EUR"))["Available"] == Decimal(70)


async def test_parallel_wrong_tokens_get_exactly_the_allowed_attempts_then_lock() -> None:
    async with isolated("payouts", database_pool_size=30, sandbox_latency_ms=20) as env:
        api = env.client
        user, budget, payee = await payout_setup(api, "100.00")
        challenge = await initiated(api, user, terms(user, budget, payee, 30))
        wrong = "A" * len(challenge["VerificationToken"])
        assert wrong != challenge["VerificationToken"]
        responses = await asyncio.gather(
            *(verify_approval(api, user, challenge["ApprovalId"], wrong) for _ in range(16))
        )
        outcomes = _outcomes(list(responses))
        # The wrong token that uses up the last attempt locks the approval and says so.
        assert outcomes == {
            (403, "INVALID_VERIFICATION_TOKEN"): MAX_ATTEMPTS - 1,
            (409, "APPROVAL_LOCKED"): 16 - (MAX_ATTEMPTS - 1),
        }, outcomes
        right = await verify_approval(
            api, user, challenge["ApprovalId"], challenge["VerificationToken"]
        )
        assert (right.status_code, right.json()["Code"]) == (409, "APPROVAL_LOCKED")


@pytest.fixture
def slow_provider_payment_locks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The banking provider takes its time after locking a payment, before going on with it."""
    pay_row = SandboxPayments._pay_row

    async def slow_pay_row(self: SandboxPayments, *args: Any, **kwargs: Any) -> Any:
        row = await pay_row(self, *args, **kwargs)
        if kwargs.get("lock"):
            await asyncio.sleep(0.4)
        return row

    monkeypatch.setattr(SandboxPayments, "_pay_row", slow_pay_row)


@pytest.mark.usefixtures("slow_provider_payment_locks")
async def test_a_payout_moving_on_while_its_fx_order_is_cancelled_settles_once() -> None:
    async with isolated("payouts", database_pool_size=30) as env:
        api = env.client
        user, budget, payee = await payout_setup(api, "500.00", "GBP")
        payout = await pay(api, user, terms(user, budget, payee, 100, FromCurrency="GBP"))

        async def cancel_meanwhile() -> httpx.Response:
            await asyncio.sleep(0.2)  # the payment is already locked by its move
            return await cancel_order(api, payout["PaymentBatchId"])

        moved, cancelled = await asyncio.gather(
            move_payout(api, payout["PayoutId"], "COMPLETED"), cancel_meanwhile()
        )
        assert moved.status_code == 200, moved.text
        # The move completed the batch's only payment, which filled its FX order.
        assert (cancelled.status_code, cancelled.json()["Code"]) == (
            409,
            "PROVIDER_BATCH_HAS_NO_FX_ORDER",
        ), cancelled.text
        assert (await get_payout(api, user, payout["PayoutId"]))["Status"] == "COMPLETED"
