"""The banking provider's side: refusals keep its status, callbacks are applied once and in
either of their shapes."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.business.models import BusinessApplication
from finplat.config import Settings
from finplat.providers import inbound
from finplat.providers.names import ExternalProvider
from tests.business.steps import (
    APPLICATION,
    PEOPLE,
    application_payload,
    business_user,
    create_application,
    deliver_callbacks,
    events_of,
    ok,
    person_payload,
    ready_to_submit,
)
from tests.callbacks import received
from tests.conftest import Tenant
from tests.onboarding import set_fault


async def send_callback(
    session_factory: async_sessionmaker[AsyncSession],
    settings: Settings,
    *,
    event_id: str,
    type_: str,
    company_id: int,
    data: dict[str, Any],
) -> inbound.Receipt:
    """A signed callback from the banking provider, through the inbound path."""
    body = inbound.render(
        event_id=event_id,
        type_=type_,
        company_id=company_id,
        created_at="2026-11-21T10:00:00Z",
        data=json.dumps(data),
    )
    return await received(
        session_factory,
        settings.provider_callback_secret,
        body,
        provider=ExternalProvider.BANKPROV,
    )


async def test_a_provider_refusal_keeps_its_status_code_and_details(
    api: httpx.AsyncClient,
) -> None:
    user_id = await business_user(api)
    await set_fault(api, "bankprov", "create_application", "error", HttpStatus=422)
    response = await api.post(APPLICATION, params={"userId": user_id}, json=application_payload())
    body = response.json()
    assert response.status_code == 422
    assert body["Code"] == "PROVIDER_REJECTED"
    assert body["ValidationErrors"]
    assert json.loads(body["Details"])["httpStatus"] == 422


async def test_nothing_is_recorded_when_the_provider_refuses(api: httpx.AsyncClient) -> None:
    user_id = await business_user(api)
    await set_fault(api, "bankprov", "create_application", "error", HttpStatus=409)
    refused = await api.post(APPLICATION, params={"userId": user_id}, json=application_payload())
    assert refused.status_code == 409
    response = await api.get(APPLICATION, params={"userId": user_id})
    assert response.status_code == 404


async def test_a_retry_after_a_provider_timeout_completes_the_application(
    api: httpx.AsyncClient, settings: Settings
) -> None:
    user_id = await business_user(api)
    await set_fault(api, "bankprov", "create_application", "timeout")
    app = api._transport.app  # type: ignore[attr-defined]
    app.state.providers = _with_short_timeout(app.state.providers)
    timed_out = await api.post(APPLICATION, params={"userId": user_id}, json=application_payload())
    assert (timed_out.status_code, timed_out.json()["Code"]) == (503, "PROVIDER_TIMEOUT")
    retried = await create_application(api, user_id)
    assert retried["status"] == "draft"


def _with_short_timeout(providers: Any) -> Any:
    import dataclasses

    from finplat.providers.calls import CallPolicy

    return dataclasses.replace(providers, policy=CallPolicy(timeout_seconds=0.2, retries=0))


async def test_person_created_is_mapped_from_the_provider_shape(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    api = tenant.client
    user_id = await business_user(api)
    await create_application(api, user_id)
    person = await ok(
        await api.post(PEOPLE, params={"userId": user_id}, json=person_payload()), 201
    )
    # The sandbox provider sends its own shape: {id, primaryEmailAddress, applicationId, ...}.
    assert await deliver_callbacks(session_factory, settings, tenant.company_id) == 1
    [event] = await events_of(api, "person.created")
    assert event["Data"]["personId"] == person["Id"]
    assert event["Data"]["email"] == person["Email"]
    assert "id" not in event["Data"]
    assert "primaryEmailAddress" not in event["Data"]


async def test_person_created_is_accepted_in_the_canonical_shape(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    api = tenant.client
    user_id = await business_user(api)
    await create_application(api, user_id)
    person = await ok(
        await api.post(PEOPLE, params={"userId": user_id}, json=person_payload()), 201
    )
    provider_person_id = await _provider_person_id(session_factory, person["Id"])
    await send_callback(
        session_factory,
        settings,
        event_id="bankprov_evt_canonical",
        type_="person.created",
        company_id=tenant.company_id,
        data={"personId": provider_person_id, "email": "charles@example.com"},
    )
    [event] = await events_of(api, "person.created")
    assert (event["Data"]["personId"], event["Data"]["email"]) == (
        person["Id"],
        "charles@example.com",
    )


async def test_a_duplicate_person_created_callback_is_processed_once(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    api = tenant.client
    user_id = await business_user(api)
    await create_application(api, user_id)
    person = await ok(
        await api.post(PEOPLE, params={"userId": user_id}, json=person_payload()), 201
    )
    provider_person_id = await _provider_person_id(session_factory, person["Id"])
    data = {"id": provider_person_id, "primaryEmailAddress": "charles@example.com"}
    receipts = [
        await send_callback(
            session_factory,
            settings,
            event_id="bankprov_evt_twice",
            type_="person.created",
            company_id=tenant.company_id,
            data=data,
        )
        for _ in range(2)
    ]
    assert [r.duplicate for r in receipts] == [False, True]
    assert len(await events_of(api, "person.created")) == 1


async def test_a_person_is_announced_once_even_under_a_new_event_id(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    api = tenant.client
    user_id = await business_user(api)
    await create_application(api, user_id)
    await ok(await api.post(PEOPLE, params={"userId": user_id}, json=person_payload()), 201)
    await deliver_callbacks(session_factory, settings, tenant.company_id)
    person_id = (await events_of(api, "person.created"))[0]["Data"]["personId"]
    await send_callback(
        session_factory,
        settings,
        event_id="bankprov_evt_resent",
        type_="person.created",
        company_id=tenant.company_id,
        data={
            "id": await _provider_person_id(session_factory, person_id),
            "primaryEmailAddress": "charles@example.com",
        },
    )
    assert len(await events_of(api, "person.created")) == 1


async def _provider_person_id(
    session_factory: async_sessionmaker[AsyncSession], person_id: int
) -> str:
    from finplat.business.models import AssociatedPerson

    async with session_factory() as db:
        person = await db.get(AssociatedPerson, person_id)
        assert person is not None
        return person.provider_person_id


async def test_an_approval_whose_account_id_exceeds_its_column_is_refused_and_changes_nothing(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    # The application keeps the account id in VARCHAR(40): this was a 500 on PostgreSQL.
    api = tenant.client
    user_id = await ready_to_submit(api)
    await ok(await api.post(f"{APPLICATION}/submit", params={"userId": user_id}))
    await deliver_callbacks(session_factory, settings, tenant.company_id)
    async with session_factory() as db:
        stmt = select(BusinessApplication.provider_application_id).where(
            BusinessApplication.user_id == user_id
        )
        provider_application_id = (await db.execute(stmt)).scalar_one()
    with pytest.raises(inbound.MalformedCallback) as refused:
        await send_callback(
            session_factory,
            settings,
            event_id="bp_evt_long_account",
            type_="application.status_changed",
            company_id=tenant.company_id,
            data={
                "applicationId": provider_application_id,
                "status": "approved",
                "accountId": "a" * 41,
            },
        )
    assert refused.value.validation_errors is not None
    assert refused.value.validation_errors.keys() == {"data.accountId"}
    application = await ok(await api.get(APPLICATION, params={"userId": user_id}))
    assert (application["status"], application["accountId"]) == ("in_review", None)
