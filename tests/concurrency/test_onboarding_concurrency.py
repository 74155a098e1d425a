"""Onboarding under real parallelism on PostgreSQL: duplicate callbacks and duplicate KYC
requests racing each other (skipped on SQLite, whose single writer serialises them)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from sqlalchemy import func, select

from finplat.events.models import Event
from finplat.kyc.models import KycSubmission
from finplat.providers.callbacks import ProviderCallback
from finplat.providers.cards.sandbox.holder_accounts import SandboxHolderAccount
from finplat.providers.identity.sandbox.models import SandboxApplicant
from finplat.provisioning.models import ProviderAccount
from finplat.provisioning.repository import ProviderAccountRepository
from tests.bankprov_onboarding.steps import account_activated, onboarded_user
from tests.callbacks import signed
from tests.databases import backend
from tests.factories import user_payload
from tests.isolated import isolated
from tests.onboarding import create_user, decide, start_kyc

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")


async def test_parallel_creations_of_one_external_user_id_create_one_user() -> None:
    async with isolated("user-race", database_pool_size=30, run_background_jobs=False) as env:
        body = user_payload(ExternalUserId="ext-race")
        responses = await asyncio.gather(
            *(env.client.post("/api/v2/users", json=body) for _ in range(10))
        )
        codes = sorted(r.status_code for r in responses)
        assert codes == [201] + [409] * 9
        assert {r.json()["Code"] for r in responses if r.status_code == 409} == {
            "USER_ALREADY_EXISTS"
        }
        listed = await env.client.get("/api/v2/users", params={"externalUserId": "ext-race"})
        assert len(listed.json()["Items"]) == 1


async def test_parallel_duplicate_callbacks_are_processed_once() -> None:
    async with isolated("cb-race", database_pool_size=30, run_background_jobs=False) as env:
        user = await create_user(env.client)
        session = await start_kyc(env.client, user["Id"])
        review = signed(
            env.app.state.settings.provider_callback_secret,
            company_id=env.company_id,
            type_="applicant.reviewed",
            data={
                "applicantId": session["ApplicantId"],
                "reviewStatus": "completed",
                "reviewResult": {"reviewAnswer": "GREEN"},
            },
            event_id="idn_evt_race",
        )
        responses = await asyncio.gather(
            *(env.client.post("/providers/identity/callbacks", **review) for _ in range(20))
        )
        assert [r.status_code for r in responses] == [200] * 20
        assert sum(not r.json()["Duplicate"] for r in responses) == 1
        async with env.app.state.session_factory() as db:
            events = (
                await db.execute(select(func.count()).where(Event.type == "kyc.status_updated"))
            ).scalar_one()
            duplicates = (await db.execute(select(ProviderCallback.duplicates))).scalar_one()
        assert events == 1
        assert duplicates == 19


@pytest.fixture
def slow_provider_account_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every read of a user's provider account waits a little before answering, so parallel
    status changes all read before any of them writes unless the read holds the row."""
    find = ProviderAccountRepository.find

    async def slow_find(
        self: ProviderAccountRepository, user_id: int, provider: str, **kwargs: Any
    ) -> ProviderAccount | None:
        account = await find(self, user_id, provider, **kwargs)
        await asyncio.sleep(0.3)
        return account

    monkeypatch.setattr(ProviderAccountRepository, "find", slow_find)


@pytest.mark.usefixtures("slow_provider_account_reads")
async def test_parallel_callbacks_of_one_status_change_report_it_once() -> None:
    async with isolated("status-race", database_pool_size=30, run_background_jobs=False) as env:
        user = await onboarded_user(env.client)
        # The provider tells the same change twice, under two event ids.
        responses = await asyncio.gather(
            *(
                env.client.post(
                    "/providers/bankprov/callbacks",
                    **account_activated(env, user["AccountId"], f"bkp_evt_{i}"),
                )
                for i in range(2)
            )
        )
        assert [r.status_code for r in responses] == [200, 200], [r.text for r in responses]
        async with env.app.state.session_factory() as db:
            bodies = (
                await db.execute(select(Event.body).where(Event.type == "account.status_updated"))
            ).scalars()
            changes = [json.loads(b)["data"]["status"] for b in bodies]
        assert changes.count("approved") == 1, changes


async def test_parallel_kyc_requests_create_one_applicant_and_one_submission() -> None:
    async with isolated("kyc-race", database_pool_size=30, run_background_jobs=False) as env:
        user = await create_user(env.client)
        responses = await asyncio.gather(
            *(
                env.client.post(f"/api/v2/users/{user['Id']}/sumsub/kyc-url", json={})
                for _ in range(10)
            )
        )
        statuses = sorted(r.status_code for r in responses)
        # One wins; the others are told the first is still being processed, never a 500.
        assert statuses[0] == 200
        assert {r.json()["Code"] for r in responses if r.status_code != 200} <= {"KYC_IN_PROGRESS"}
        async with env.app.state.session_factory() as db:
            applicants = (
                await db.execute(select(func.count()).select_from(SandboxApplicant))
            ).scalar_one()
            submissions = (
                await db.execute(select(func.count()).select_from(KycSubmission))
            ).scalar_one()
        assert (applicants, submissions) == (1, 1)
        assert (await env.client.get(f"/api/v2/users/{user['Id']}")).json()["KycStatus"] == (
            "PENDING"
        )


async def test_parallel_repairs_open_one_card_provider_account() -> None:
    async with isolated("repair-race", database_pool_size=30, run_background_jobs=False) as env:
        user = await create_user(env.client)
        await start_kyc(env.client, user["Id"])
        await env.client.put(
            "/api/v2/sandbox/faults",
            json={
                "Provider": "cardprov",
                "Operation": "create_account",
                "Mode": "transient",
                "Count": 10,
            },
        )
        await decide(env.client, user["Id"], "APPROVED")  # provisioning fails: still waiting
        await env.client.delete("/api/v2/sandbox/faults")
        responses = await asyncio.gather(
            *(
                env.client.post(f"/api/v2/users/create-cardprov-account/{user['Id']}")
                for _ in range(10)
            )
        )
        assert [r.status_code for r in responses] == [200] * 10
        assert len({r.json()["AccountId"] for r in responses}) == 1
        async with env.app.state.session_factory() as db:
            accounts = (
                await db.execute(select(func.count()).select_from(SandboxHolderAccount))
            ).scalar_one()
        assert accounts == 1
