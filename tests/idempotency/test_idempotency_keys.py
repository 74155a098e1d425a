"""Idempotency-Key on a state-changing call: one effect, the same answer on every retry."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from fastapi import FastAPI, Request
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.errors import ApiError, ServiceUnavailable
from finplat.http.routing import CurrentPrincipal, DbSession, api_router
from finplat.idempotency import service as idempotency
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.idempotency.models import IdempotencyKey
from finplat.kit.clock import set_clock
from finplat.ledger.models import LedgerTransfer
from finplat.providers.errors import ProviderUnavailable
from finplat.providers.funding.sandbox.adapter import SandboxFundingRail
from finplat.providers.funding.sandbox.models import SandboxFundingConfirmation
from tests.conftest import Tenant, TenantFactory

FUNDING = "/api/v2/sandbox/company/funding"


async def fund(client: httpx.AsyncClient, key: str, amount: float = 100.0) -> httpx.Response:
    return await client.post(
        FUNDING, json={"Currency": "USD", "Amount": amount}, headers={"Idempotency-Key": key}
    )


async def count(session: AsyncSession, model: type, *where: object) -> int:
    stmt = select(func.count()).select_from(model).where(*where)  # type: ignore[arg-type]
    return int((await session.execute(stmt)).scalar_one())


async def test_retry_gets_the_same_response_byte_for_byte(tenant: Tenant) -> None:
    first = await fund(tenant.client, "key-1")
    second = await fund(tenant.client, "key-1")
    assert first.status_code == second.status_code == 200
    assert first.content == second.content
    assert second.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers


async def test_retry_causes_no_second_effect_and_no_second_provider_call(
    tenant: Tenant, session: AsyncSession
) -> None:
    for _ in range(3):
        assert (await fund(tenant.client, "once")).status_code == 200
    balances = (await tenant.client.get("/api/v2/company/balances")).json()["Balances"]
    assert balances[0]["Posted"] == 100
    assert (
        await count(
            session,
            LedgerTransfer,
            LedgerTransfer.company_id == tenant.company_id,
            LedgerTransfer.kind == "post",
        )
        == 1
    )
    calls = (
        (
            await session.execute(
                select(SandboxFundingConfirmation.calls).where(
                    SandboxFundingConfirmation.company_id == tenant.company_id
                )
            )
        )
        .scalars()
        .all()
    )
    assert calls == [1]


async def test_json_key_order_and_spacing_do_not_make_a_different_request(tenant: Tenant) -> None:
    first = await tenant.client.post(
        FUNDING,
        content=b'{"Currency":"USD","Amount":5}',
        headers={"Idempotency-Key": "k", "content-type": "application/json"},
    )
    second = await tenant.client.post(
        FUNDING,
        content=b'{ "Amount": 5,  "Currency": "USD" }',
        headers={"Idempotency-Key": "k", "content-type": "application/json"},
    )
    assert second.content == first.content


async def test_same_key_with_a_different_request_is_409_reused(tenant: Tenant) -> None:
    await fund(tenant.client, "reuse", 100)
    response = await fund(tenant.client, "reuse", 200)
    assert response.status_code == 409
    assert response.json()["Code"] == "IDEMPOTENCY_KEY_REUSED"


async def test_keys_are_scoped_to_the_company(make_tenant: TenantFactory) -> None:
    a, b = await make_tenant("A"), await make_tenant("B")
    assert (await fund(a.client, "shared", 100)).status_code == 200
    response = await fund(b.client, "shared", 300)
    assert response.status_code == 200
    assert response.json()["Amount"] == 300


async def test_key_of_255_characters_is_accepted_and_256_refused(tenant: Tenant) -> None:
    assert (await fund(tenant.client, "k" * 255)).status_code == 200
    response = await fund(tenant.client, "k" * 256)
    assert response.status_code == 400
    assert "Idempotency-Key" in response.json()["ValidationErrors"]


async def test_key_with_control_or_non_ascii_characters_is_refused(tenant: Tenant) -> None:
    for key in (b"bad\x7fkey", "caf\u00e9".encode("latin-1")):
        response = await tenant.client.post(
            FUNDING,
            json={"Currency": "USD", "Amount": 1},
            headers=[(b"Idempotency-Key", key)],
        )
        assert response.status_code == 400
        assert "Idempotency-Key" in response.json()["ValidationErrors"]


async def test_validation_errors_are_not_stored_for_the_key(tenant: Tenant) -> None:
    bad = await tenant.client.post(
        FUNDING, json={"Currency": "USD"}, headers={"Idempotency-Key": "fix-me"}
    )
    assert bad.status_code == 400
    # The request never ran; the corrected request under the same key would be a different
    # fingerprint, but nothing was recorded, so it simply runs.
    assert (await fund(tenant.client, "fix-me")).status_code == 200


def _app_with_failing_route(app: FastAPI, error: ApiError) -> None:
    router = api_router()
    state = {"runs": 0}

    @router.post("/test/idempotent-failure")
    async def failing(
        request: Request,
        session: DbSession,
        principal: CurrentPrincipal,
        key: IdempotencyKeyHeader = None,
    ) -> dict[str, int]:
        await claim_request(request, session, principal, key)
        state["runs"] += 1
        if state["runs"] == 1:
            raise error
        return {"runs": state["runs"]}

    app.include_router(router)


async def test_business_error_is_the_final_answer_for_the_key(app: FastAPI, tenant: Tenant) -> None:
    _app_with_failing_route(app, ApiError("nope", status=400, code="RULE_BROKEN"))
    first = await tenant.client.post("/test/idempotent-failure", headers={"Idempotency-Key": "b"})
    second = await tenant.client.post("/test/idempotent-failure", headers={"Idempotency-Key": "b"})
    assert first.status_code == second.status_code == 400
    assert first.content == second.content
    assert second.headers["idempotent-replayed"] == "true"


async def test_technical_error_is_not_stored_and_a_retry_runs_again(
    app: FastAPI, tenant: Tenant
) -> None:
    _app_with_failing_route(app, ServiceUnavailable())
    first = await tenant.client.post("/test/idempotent-failure", headers={"Idempotency-Key": "t"})
    second = await tenant.client.post("/test/idempotent-failure", headers={"Idempotency-Key": "t"})
    assert first.status_code == 503
    assert second.status_code == 200
    assert second.json() == {"runs": 2}


class FlakyRail(SandboxFundingRail):
    """The sandbox rail, failing technically on its first `failures` calls."""

    def __init__(self, factory: async_sessionmaker[AsyncSession], failures: int) -> None:
        super().__init__(factory)
        self.failures = failures
        self.keys: list[str] = []

    async def confirm_incoming_funds(self, **kwargs):  # type: ignore[no-untyped-def]
        self.keys.append(kwargs["idempotency_key"])
        if self.failures:
            self.failures -= 1
            raise ProviderUnavailable()
        return await super().confirm_incoming_funds(**kwargs)


async def test_retry_after_provider_failure_resumes_without_a_second_reservation(
    app: FastAPI,
    tenant: Tenant,
    session: AsyncSession,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    rail = FlakyRail(session_factory, failures=1)
    app.state.providers = dataclasses.replace(app.state.providers, funding=rail)
    first = await fund(tenant.client, "flaky")
    assert first.status_code == 503
    assert first.json()["Code"] == "PROVIDER_UNAVAILABLE"
    balances = (await tenant.client.get("/api/v2/company/balances")).json()["Balances"]
    assert balances[0]["PendingCredits"] == 100  # reserved, not yet credited
    assert balances[0]["Available"] == 0
    second = await fund(tenant.client, "flaky")
    assert second.status_code == 200
    assert len(rail.keys) == 2
    assert rail.keys[0] == rail.keys[1]  # the same derived provider key
    assert (
        await count(
            session,
            LedgerTransfer,
            LedgerTransfer.company_id == tenant.company_id,
            LedgerTransfer.kind == "pending",
        )
        == 1
    )
    balances = (await tenant.client.get("/api/v2/company/balances")).json()["Balances"]
    assert (balances[0]["Available"], balances[0]["PendingCredits"]) == (100, 0)


async def test_in_flight_key_answers_in_use_after_the_wait(
    app: FastAPI, tenant: Tenant, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    app.state.settings = app.state.settings.model_copy(update={"idempotency_wait_seconds": 0})
    async with session_factory() as session:
        await idempotency.claim(
            session,
            company_id=tenant.company_id,
            key="busy",
            fingerprint_=idempotency.fingerprint(
                "POST", FUNDING, "", b'{"Currency":"USD","Amount":100.0}'
            ),
            method="POST",
            path=FUNDING,
        )
        await session.commit()
    response = await fund(tenant.client, "busy")
    assert response.status_code == 409
    assert response.json()["Code"] == "IDEMPOTENCY_KEY_IN_USE"


async def test_stale_lease_is_taken_over(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    start = datetime(2033, 1, 1, tzinfo=UTC)
    set_clock(lambda: start)
    body = b'{"Currency":"USD","Amount":100.0}'
    async with session_factory() as session:
        await idempotency.claim(
            session,
            company_id=tenant.company_id,
            key="crashed",
            fingerprint_=idempotency.fingerprint("POST", FUNDING, "", body),
            method="POST",
            path=FUNDING,
        )
        await session.commit()
    set_clock(lambda: start + timedelta(minutes=5))  # the first worker's lease has run out
    assert (await fund(tenant.client, "crashed")).status_code == 200


async def test_reference_with_the_same_terms_replays_and_other_terms_are_400(
    session: AsyncSession, tenant: Tenant
) -> None:
    terms = {"amount": "10.00", "currency": "USD", "to": "master"}
    claim = await idempotency.claim_reference(
        session,
        company_id=tenant.company_id,
        scope="externalReferenceId",
        reference="ext-1",
        terms=terms,
    )
    await idempotency.complete(
        session, claim, status=200, body=b'{"ok":true}', content_type="application/json"
    )
    with pytest.raises(idempotency.StoredResponse) as replay:
        await idempotency.claim_reference(
            session,
            company_id=tenant.company_id,
            scope="externalReferenceId",
            reference="ext-1",
            terms=dict(terms),
        )
    assert replay.value.body == b'{"ok":true}'
    with pytest.raises(idempotency.ReferenceReused) as conflict:
        await idempotency.claim_reference(
            session,
            company_id=tenant.company_id,
            scope="externalReferenceId",
            reference="ext-1",
            terms={**terms, "amount": "11.00"},
        )
    assert conflict.value.status == 400


async def test_finished_keys_are_purged_after_24_hours_and_not_before(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    start = datetime(2034, 3, 1, tzinfo=UTC)
    set_clock(lambda: start)
    assert (await fund(tenant.client, "old")).status_code == 200
    set_clock(lambda: start + timedelta(hours=23))
    async with session_factory() as session:
        assert await idempotency.purge_expired(session) == 0
        await session.commit()
    set_clock(lambda: start + timedelta(hours=25))
    async with session_factory() as session:
        assert await idempotency.purge_expired(session) >= 1
        remaining = await count(
            session, IdempotencyKey, IdempotencyKey.company_id == tenant.company_id
        )
        await session.commit()
    assert remaining == 0


async def test_operation_that_requires_a_key_is_400_without_one(
    app: FastAPI, tenant: Tenant
) -> None:
    router = api_router()

    @router.post("/test/key-required")
    async def key_required(
        request: Request,
        session: DbSession,
        principal: CurrentPrincipal,
        key: IdempotencyKeyHeader = None,
    ) -> dict[str, bool]:
        await claim_request(request, session, principal, key, required=True)
        return {"ok": True}

    app.include_router(router)
    response = await tenant.client.post("/test/key-required")
    assert response.status_code == 400
    assert response.json()["Code"] == "IDEMPOTENCY_KEY_REQUIRED"
    assert (
        await tenant.client.post("/test/key-required", headers={"Idempotency-Key": "x"})
    ).status_code == 200


async def test_key_with_leading_or_trailing_spaces_is_refused(tenant: Tenant) -> None:
    for key in (b" padded", b"padded ", b"   "):
        response = await tenant.client.post(
            FUNDING, json={"Currency": "USD", "Amount": 1}, headers=[(b"Idempotency-Key", key)]
        )
        assert response.status_code == 400, key
