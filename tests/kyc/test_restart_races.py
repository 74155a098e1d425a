"""A KYC restart racing the provider's review. No lock is held across the provider call, so a
review can land while a restart waits on the provider; the review stands, and the restart is
answered as a restart after that review would be (approved: 409 `KYC_ALREADY_APPROVED`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from finplat.providers.identity.sandbox.adapter import SandboxIdentityVerification
from tests.databases import backend
from tests.isolated import isolated
from tests.onboarding import create_user, decide, start_kyc

Meanwhile = list[Callable[[], Awaitable[object]]]


@pytest.fixture
def at_the_provider(monkeypatch: pytest.MonkeyPatch) -> Meanwhile:
    """What to do, once each, while a KYC start waits on the identity provider's token."""
    actions: Meanwhile = []
    access_token = SandboxIdentityVerification.access_token

    async def meanwhile(self: SandboxIdentityVerification, **kwargs: Any) -> Any:
        token = await access_token(self, **kwargs)
        while actions:
            await actions.pop(0)()
        return token

    monkeypatch.setattr(SandboxIdentityVerification, "access_token", meanwhile)
    return actions


async def _kyc_status(api: httpx.AsyncClient, user_id: int) -> str:
    return str((await api.get(f"/api/v2/users/{user_id}")).json()["KycStatus"])


async def _status_trail(api: httpx.AsyncClient) -> list[tuple[str, str]]:
    """The (previous, new) statuses `kyc.status_updated` announced, oldest first."""
    events = (
        await api.get("/api/v2/events", params={"type": "kyc.status_updated", "pageSize": 100})
    ).json()["Items"]
    ordered = sorted(events, key=lambda e: e["Timestamp"])
    return [(e["Data"]["previousStatus"], e["Data"]["status"]) for e in ordered]


async def _resubmission_required(api: httpx.AsyncClient) -> dict[str, Any]:
    user = await create_user(api)
    await start_kyc(api, user["Id"])
    await decide(api, user["Id"], "RESUBMISSION")
    assert await _kyc_status(api, user["Id"]) == "RESUBMISSION_REQUIRED"
    return user


@pytest.mark.parametrize(
    ("outcome", "status", "code"),
    [("APPROVED", "APPROVED", "KYC_ALREADY_APPROVED"), ("REJECTED", "REJECTED", "KYC_REJECTED")],
)
async def test_a_review_landing_while_a_restart_is_at_the_provider_is_not_undone(
    at_the_provider: Meanwhile, outcome: str, status: str, code: str
) -> None:
    async with isolated("kyc-restart") as env:
        api = env.client
        user = await _resubmission_required(api)
        at_the_provider.append(lambda: decide(api, user["Id"], outcome))
        restarted = await api.post(f"/api/v2/users/{user['Id']}/sumsub/kyc-url", json={})
        assert not at_the_provider  # the review did land during the restart
        assert (restarted.status_code, restarted.json()["Code"]) == (409, code), restarted.text
        assert await _kyc_status(api, user["Id"]) == status
        assert (await _status_trail(api))[-1] == ("RESUBMISSION_REQUIRED", status)


async def test_a_restart_recorded_before_the_review_lands_is_followed_by_it() -> None:
    async with isolated("kyc-restart") as env:
        api = env.client
        user = await _resubmission_required(api)
        restarted = await start_kyc(api, user["Id"])
        assert restarted["ExistingStatus"] == "RESUBMISSION_REQUIRED"
        await decide(api, user["Id"], "APPROVED")
        assert await _kyc_status(api, user["Id"]) == "APPROVED"
        assert (await _status_trail(api))[-1] == ("PENDING", "APPROVED")


@pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")
async def test_parallel_restarts_racing_an_approval_never_move_the_status_back() -> None:
    async with isolated("kyc-restart", database_pool_size=40, sandbox_latency_ms=20) as env:
        api = env.client
        user = await _resubmission_required(api)
        restart = f"/api/v2/users/{user['Id']}/sumsub/kyc-url"
        approve = f"/api/v2/sandbox/users/{user['Id']}/kyc/complete"
        *restarts, approval = await asyncio.gather(
            *(api.post(restart, json={}) for _ in range(4)),
            api.post(approve, json={"Outcome": "APPROVED"}),
        )
        assert approval.status_code == 200, approval.text
        answers = {(r.status_code, r.json().get("Code")) for r in restarts}
        assert answers <= {(200, None), (409, "KYC_ALREADY_APPROVED")}, answers
        # The approval was announced; nothing may take it back, silently or otherwise.
        assert await _kyc_status(api, user["Id"]) == "APPROVED"
        assert (await _status_trail(api))[-1][1] == "APPROVED"
