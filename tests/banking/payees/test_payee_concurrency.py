"""Real parallel payee verifications against PostgreSQL (skipped on SQLite, whose single writer
makes the race impossible by construction): a payee's token cannot be guessed more often than
allowed, however many guesses arrive at once."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from finplat.banking.payees.verification import MAX_ATTEMPTS
from tests.banking.payees.steps import confirm, pending_payee
from tests.banking.steps import banking_user
from tests.databases import backend
from tests.isolated import isolated

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")
GUESSES = 16


async def test_parallel_wrong_tokens_get_exactly_the_allowed_attempts_then_lock() -> None:
    async with isolated("payees", database_pool_size=30, sandbox_latency_ms=20) as env:
        api = env.client
        user = await banking_user(api)
        challenge = await pending_payee(api, user)
        wrong = "A" * len(challenge["VerificationToken"])
        assert wrong != challenge["VerificationToken"]
        responses = await asyncio.gather(
            *(confirm(api, user, challenge["PayeeId"], wrong) for _ in range(GUESSES))
        )
        outcomes = Counter((r.status_code, r.json()["Code"]) for r in responses)
        # The wrong token that uses up the last attempt locks the payee and says so.
        assert outcomes == {
            (403, "INVALID_VERIFICATION_TOKEN"): MAX_ATTEMPTS - 1,
            (409, "PAYEE_VERIFICATION_LOCKED"): GUESSES - MAX_ATTEMPTS + 1,
        }, outcomes
        right = await confirm(api, user, challenge["PayeeId"], challenge["VerificationToken"])
        assert (right.status_code, right.json()["Code"]) == (409, "PAYEE_VERIFICATION_LOCKED")
