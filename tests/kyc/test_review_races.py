"""A KYC review racing the banking provider's own decision (PostgreSQL; SQLite's single writer
makes the race impossible by construction). The review maps its outcome onto the banking
provider only while that provider has not decided the account itself; the decision is read
under the account's row lock, so a provider approval landing meanwhile is never overwritten."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from finplat.provisioning.models import ProviderAccount
from finplat.provisioning.repository import ProviderAccountRepository
from tests.bankprov_onboarding.steps import bankprov_status, onboarded_user, provider_activates
from tests.databases import backend
from tests.isolated import isolated
from tests.onboarding import decide

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")


async def test_a_review_does_not_undo_the_banking_providers_approval_meanwhile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with isolated("kyc", database_pool_size=20, run_background_jobs=False) as env:
        api = env.client
        user = await onboarded_user(api)
        assert await bankprov_status(api, user["Id"]) == "PENDING"
        find = ProviderAccountRepository.find
        approvals: list[asyncio.Task[None]] = []

        async def approved_while_the_review_decides(
            self: ProviderAccountRepository, user_id: int, provider: str, **kwargs: Any
        ) -> ProviderAccount | None:
            account = await find(self, user_id, provider, **kwargs)
            if provider == "bankprov" and not approvals:
                approvals.append(
                    asyncio.create_task(
                        provider_activates(env, user["AccountId"], "bkp_evt_approved_meanwhile")
                    )
                )
                await asyncio.sleep(0.5)  # the approval commits now unless the row is locked
            return account

        monkeypatch.setattr(ProviderAccountRepository, "find", approved_while_the_review_decides)
        await decide(api, user["Id"], "RESUBMISSION")
        await asyncio.gather(*approvals)
        assert approvals, "the review never read the banking provider's account"
        assert await bankprov_status(api, user["Id"]) == "approved"
