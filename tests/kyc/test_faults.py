"""Provider fault injection and how the platform surfaces each failure."""

from __future__ import annotations

import httpx
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.providers.identity.sandbox.models import SandboxApplicant
from tests.onboarding import create_user, set_fault


async def kyc_url(api: httpx.AsyncClient, user_id: int) -> httpx.Response:
    return await api.post(f"/api/v2/users/{user_id}/sumsub/kyc-url", json={})


async def test_timeout_is_a_clear_503_and_changes_nothing_here(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    await set_fault(api, "identity", "create_applicant", "timeout")
    response = await kyc_url(api, user["Id"])
    assert response.status_code == 503
    assert response.json()["Code"] == "PROVIDER_TIMEOUT"
    assert (await api.get(f"/api/v2/users/{user['Id']}")).json()["KycStatus"] == "NOT_STARTED"


async def test_retry_after_a_timeout_completes_with_the_same_applicant(
    api: httpx.AsyncClient, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    user = await create_user(api)
    await set_fault(api, "identity", "create_applicant", "timeout")
    await kyc_url(api, user["Id"])
    retry = await kyc_url(api, user["Id"])
    assert retry.status_code == 200
    assert retry.json()["IsNewApplicant"] is False  # the timed-out call did create it
    async with session_factory() as db:
        applicants = (
            (
                await db.execute(
                    select(SandboxApplicant).where(
                        SandboxApplicant.reference.endswith(f"-{user['Id']}")
                    )
                )
            )
            .scalars()
            .all()
        )
    assert len(applicants) == 1


async def test_transient_failure_of_an_idempotent_call_is_retried(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    await set_fault(api, "identity", "create_applicant", "transient", count=2)
    assert (await kyc_url(api, user["Id"])).status_code == 200


async def test_persistent_technical_failure_is_a_503(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    await set_fault(api, "identity", "access_token", "transient", count=10)
    response = await kyc_url(api, user["Id"])
    assert (response.status_code, response.json()["Code"]) == (503, "PROVIDER_UNAVAILABLE")


async def test_provider_refusal_keeps_its_status_and_details(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    await set_fault(api, "identity", "create_applicant", "error", HttpStatus=409)
    response = await kyc_url(api, user["Id"])
    body = response.json()
    assert response.status_code == 409
    assert body["Code"] == "PROVIDER_REJECTED"
    assert body["ValidationErrors"]
    assert '"provider": "identity"' in body["Details"]


async def test_fault_is_used_up_after_count_calls(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    await set_fault(api, "identity", "create_applicant", "error", count=1)
    assert (await kyc_url(api, user["Id"])).status_code == 422
    assert (await kyc_url(api, user["Id"])).status_code == 200


async def test_setting_a_fault_again_replaces_it(api: httpx.AsyncClient) -> None:
    await set_fault(api, "cardprov", "load", "error", count=3)
    await set_fault(api, "cardprov", "load", "timeout", count=2)
    listed = (await api.get("/api/v2/sandbox/faults")).json()["Faults"]
    assert [(f["Mode"], f["Remaining"]) for f in listed] == [("timeout", 2)]


async def test_faults_are_listed_and_cleared(api: httpx.AsyncClient) -> None:
    await set_fault(api, "identity", "create_applicant", "error", count=3)
    await set_fault(api, "cardprov", "create_account", "timeout")
    listed = (await api.get("/api/v2/sandbox/faults")).json()["Faults"]
    assert {(f["Provider"], f["Operation"], f["Remaining"]) for f in listed} == {
        ("identity", "create_applicant", 3),
        ("cardprov", "create_account", 1),
    }
    cleared = await api.delete("/api/v2/sandbox/faults", params={"provider": "identity"})
    assert cleared.json() == {"Cleared": 1}
    assert len((await api.get("/api/v2/sandbox/faults")).json()["Faults"]) == 1
    assert (await api.delete("/api/v2/sandbox/faults")).json() == {"Cleared": 1}


async def test_operation_must_belong_to_the_provider(api: httpx.AsyncClient) -> None:
    response = await api.put(
        "/api/v2/sandbox/faults",
        json={"Provider": "cardprov", "Operation": "create_applicant", "Mode": "error", "Count": 1},
    )
    assert response.status_code == 400


async def test_faults_of_one_company_do_not_affect_another(
    api: httpx.AsyncClient, make_tenant: object
) -> None:
    await set_fault(api, "identity", "create_applicant", "error", count=5)
    other = await make_tenant("Other Co")  # type: ignore[operator]
    user = await create_user(other.client)
    assert (await kyc_url(other.client, user["Id"])).status_code == 200
