"""Parallel verification-document uploads against PostgreSQL (skipped on SQLite, whose single
writer makes these races impossible by construction)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from sqlalchemy import func, select

from finplat.bankprov_onboarding.models import BankprovDocument
from finplat.events.models import Event
from finplat.providers.banking_onboarding.sandbox.adapter import SandboxBankingOnboarding
from finplat.provisioning.models import ProviderAccount
from finplat.provisioning.repository import ProviderAccountRepository
from tests.bankprov_onboarding.steps import (
    bankprov_status,
    documents,
    onboarded_user,
    provider_activates,
    upload,
)
from tests.databases import backend
from tests.documents import samples
from tests.isolated import isolated
from tests.onboarding import decide

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")


async def test_the_same_files_sent_in_parallel_return_one_document() -> None:
    async with isolated("documents", database_pool_size=20, sandbox_latency_ms=20) as env:
        api = env.client
        user = await onboarded_user(api)
        await decide(api, user["Id"], "RESUBMISSION", provider="bankprov")
        files = documents(samples.pdf(), samples.png())
        responses = await asyncio.gather(*(upload(api, user["Id"], files) for _ in range(8)))
        assert [r.status_code for r in responses] == [200] * 8, [r.text for r in responses]
        assert len({r.json()["DocumentId"] for r in responses}) == 1
        async with env.app.state.session_factory() as db:
            stored = select(func.count()).select_from(BankprovDocument)
            assert (await db.execute(stored)).scalar_one() == 1
        assert await bankprov_status(api, user["Id"]) == "PENDING"


@pytest.fixture
def approval_after_the_upload(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Once the provider has the document, it approves the account while the platform is
    reading the account's status (the test fills in `env` and `account_id`)."""
    target: dict[str, Any] = {}
    received = asyncio.Event()
    upload_document = SandboxBankingOnboarding.upload_document
    find = ProviderAccountRepository.find

    async def receive(self: SandboxBankingOnboarding, **kwargs: Any) -> Any:
        answer = await upload_document(self, **kwargs)
        received.set()
        return answer

    async def read_meanwhile(
        self: ProviderAccountRepository, user_id: int, provider: str, **kwargs: Any
    ) -> ProviderAccount | None:
        account = await find(self, user_id, provider, **kwargs)
        if received.is_set() and not kwargs.get("lock"):
            received.clear()
            await provider_activates(target["env"], target["account_id"], "bkp_evt_approved")
        return account

    monkeypatch.setattr(SandboxBankingOnboarding, "upload_document", receive)
    monkeypatch.setattr(ProviderAccountRepository, "find", read_meanwhile)
    return target


async def test_an_upload_does_not_undo_the_providers_approval_meanwhile(
    approval_after_the_upload: dict[str, Any],
) -> None:
    async with isolated("documents", database_pool_size=20, run_background_jobs=False) as env:
        api = env.client
        user = await onboarded_user(api)
        await decide(api, user["Id"], "RESUBMISSION", provider="bankprov")
        approval_after_the_upload.update(env=env, account_id=user["AccountId"])
        response = await upload(api, user["Id"], documents(samples.pdf()))
        assert response.status_code == 200, response.text
        assert response.json()["Status"] == "approved"
        assert await bankprov_status(api, user["Id"]) == "approved"
        async with env.app.state.session_factory() as db:
            bodies = (
                await db.execute(select(Event.body).where(Event.type == "account.status_updated"))
            ).scalars()
            changes = [json.loads(b)["data"]["status"] for b in bodies]
        assert changes[-1] == "approved", changes
