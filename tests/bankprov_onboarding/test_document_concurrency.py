"""Parallel verification-document uploads against PostgreSQL (skipped on SQLite, whose single
writer makes these races impossible by construction)."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select

from finplat.bankprov_onboarding.models import BankprovDocument
from tests.bankprov_onboarding.steps import bankprov_status, documents, onboarded_user, upload
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
