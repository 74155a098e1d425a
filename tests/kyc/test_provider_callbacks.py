"""Provider callbacks: verified, de-duplicated by provider event id, processed once."""

from __future__ import annotations

import hmac
import json
from datetime import datetime, timedelta

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.config import Settings
from finplat.events.models import Event
from finplat.kit.clock import utcnow
from finplat.providers import inbound
from finplat.providers.callbacks import ProviderCallback
from finplat.providers.names import ExternalProvider
from finplat.sealing.keyring import new_key
from tests.callbacks import received
from tests.conftest import Tenant
from tests.onboarding import approved_user, create_user, start_kyc
from tests.sensitive_data import SCANNER


def review_callback(company_id: int, applicant_id: str, event_id: str = "idn_evt_1") -> bytes:
    return json.dumps(
        {
            "id": event_id,
            "type": "applicant.reviewed",
            "companyId": company_id,
            "createdAt": "2026-11-21T12:00:00Z",
            "data": {
                "applicantId": applicant_id,
                "reviewStatus": "completed",
                "reviewResult": {"reviewAnswer": "GREEN"},
            },
        }
    ).encode()


async def post_callback(
    client: httpx.AsyncClient, body: bytes, signed: dict[str, str], provider: str = "identity"
) -> httpx.Response:
    """POST `body` with the signature headers `signed`."""
    return await client.post(
        f"/providers/{provider}/callbacks",
        content=body,
        headers={"content-type": "application/json", **signed},
    )


async def count_events(
    session_factory: async_sessionmaker[AsyncSession], company_id: int, type_: str
) -> int:
    async with session_factory() as db:
        stmt = select(func.count()).where(Event.company_id == company_id, Event.type == type_)
        return int((await db.execute(stmt)).scalar_one())


async def test_signed_callback_is_applied(
    api: httpx.AsyncClient, anonymous: httpx.AsyncClient, tenant: Tenant, settings: Settings
) -> None:
    user = await create_user(api)
    session = await start_kyc(api, user["Id"])
    body = review_callback(tenant.company_id, session["ApplicantId"])
    response = await post_callback(
        anonymous, body, inbound.signature_headers(settings.provider_callback_secret, body)
    )
    assert response.status_code == 200
    assert response.json() == {"Received": True, "EventId": "idn_evt_1", "Duplicate": False}
    assert (await api.get(f"/api/v2/users/{user['Id']}")).json()["KycStatus"] == "APPROVED"


async def test_duplicate_callback_is_processed_once(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    tenant: Tenant,
    settings: Settings,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    user = await create_user(api)
    session = await start_kyc(api, user["Id"])
    body = review_callback(tenant.company_id, session["ApplicantId"])
    signature = inbound.signature_headers(settings.provider_callback_secret, body)
    first = await post_callback(anonymous, body, signature)
    second = await post_callback(anonymous, body, signature)
    assert (first.json()["Duplicate"], second.json()["Duplicate"]) == (False, True)
    assert await count_events(session_factory, tenant.company_id, "kyc.status_updated") == 1
    async with session_factory() as db:
        row = (
            await db.execute(
                select(ProviderCallback).where(ProviderCallback.event_id == "idn_evt_1")
            )
        ).scalar_one()
    assert row.duplicates == 1
    assert row.processed_at is not None


async def test_what_runs_alongside_a_callback_commits_only_with_it(
    api: httpx.AsyncClient,
    tenant: Tenant,
    settings: Settings,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    user = await create_user(api)
    session = await start_kyc(api, user["Id"])
    body = review_callback(tenant.company_id, session["ApplicantId"], event_id="idn_evt_along")
    secret = settings.provider_callback_secret
    seen: list[int] = []

    async def failing(db: AsyncSession) -> None:
        raise RuntimeError("the sender's bookkeeping failed")

    async def counting(db: AsyncSession) -> None:
        stmt = select(func.count()).where(ProviderCallback.event_id == "idn_evt_along")
        seen.append(int((await db.execute(stmt)).scalar_one()))

    identity = ExternalProvider.IDENTITY
    with pytest.raises(RuntimeError):
        await received(session_factory, secret, body, provider=identity, alongside=failing)
    assert (await api.get(f"/api/v2/users/{user['Id']}")).json()["KycStatus"] == "PENDING"
    receipt = await received(session_factory, secret, body, provider=identity, alongside=counting)
    assert receipt.duplicate is False
    assert seen == [1]  # the callback's row, in the same transaction
    assert (await api.get(f"/api/v2/users/{user['Id']}")).json()["KycStatus"] == "APPROVED"


async def test_callback_with_a_wrong_signature_is_refused_and_ignored(
    api: httpx.AsyncClient, anonymous: httpx.AsyncClient, tenant: Tenant
) -> None:
    user = await create_user(api)
    session = await start_kyc(api, user["Id"])
    body = review_callback(tenant.company_id, session["ApplicantId"])
    response = await post_callback(
        anonymous, body, inbound.signature_headers("not-the-secret-at-all", body)
    )
    assert (response.status_code, response.json()["Code"]) == (401, "INVALID_CALLBACK_SIGNATURE")
    assert (await api.get(f"/api/v2/users/{user['Id']}")).json()["KycStatus"] == "PENDING"


def signed_at(secret: str, body: bytes, moment: datetime) -> dict[str, str]:
    timestamp = str(int(moment.timestamp()))
    return {
        inbound.TIMESTAMP_HEADER: timestamp,
        inbound.SIGNATURE_HEADER: inbound.sign(secret, timestamp, body),
    }


async def test_a_callback_signed_without_a_timestamp_is_refused(
    api: httpx.AsyncClient, anonymous: httpx.AsyncClient, tenant: Tenant, settings: Settings
) -> None:
    user = await create_user(api)
    session = await start_kyc(api, user["Id"])
    body = review_callback(tenant.company_id, session["ApplicantId"])
    # The signature scheme before timestamps: HMAC of the body alone.
    body_only = hmac.new(settings.provider_callback_secret.encode(), body, "sha256").hexdigest()
    response = await post_callback(anonymous, body, {inbound.SIGNATURE_HEADER: body_only})
    assert (response.status_code, response.json()["Code"]) == (401, "INVALID_CALLBACK_TIMESTAMP")
    assert (await api.get(f"/api/v2/users/{user['Id']}")).json()["KycStatus"] == "PENDING"


async def test_a_callback_whose_timestamp_was_changed_after_signing_is_refused(
    anonymous: httpx.AsyncClient, tenant: Tenant, settings: Settings
) -> None:
    body = review_callback(tenant.company_id, "nobody")
    signed = signed_at(settings.provider_callback_secret, body, utcnow() - timedelta(hours=1))
    signed[inbound.TIMESTAMP_HEADER] = str(int(utcnow().timestamp()))
    response = await post_callback(anonymous, body, signed)
    assert (response.status_code, response.json()["Code"]) == (401, "INVALID_CALLBACK_SIGNATURE")


@pytest.mark.parametrize("offset", [timedelta(minutes=-6), timedelta(minutes=6)])
async def test_a_callback_signed_outside_the_tolerance_is_refused(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    tenant: Tenant,
    settings: Settings,
    session_factory: async_sessionmaker[AsyncSession],
    offset: timedelta,
) -> None:
    user = await create_user(api)
    session = await start_kyc(api, user["Id"])
    body = review_callback(tenant.company_id, session["ApplicantId"])
    signed = signed_at(settings.provider_callback_secret, body, utcnow() + offset)
    response = await post_callback(anonymous, body, signed)
    assert (response.status_code, response.json()["Code"]) == (
        401,
        "CALLBACK_TIMESTAMP_OUT_OF_TOLERANCE",
    )
    assert await recorded_callbacks(session_factory) == 0
    assert (await api.get(f"/api/v2/users/{user['Id']}")).json()["KycStatus"] == "PENDING"


@pytest.mark.parametrize("offset", [timedelta(minutes=-4), timedelta(minutes=4)])
async def test_a_callback_signed_within_the_tolerance_is_applied(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    tenant: Tenant,
    settings: Settings,
    offset: timedelta,
) -> None:
    user = await create_user(api)
    session = await start_kyc(api, user["Id"])
    body = review_callback(tenant.company_id, session["ApplicantId"])
    signed = signed_at(settings.provider_callback_secret, body, utcnow() + offset)
    response = await post_callback(anonymous, body, signed)
    assert response.status_code == 200, response.text
    assert (await api.get(f"/api/v2/users/{user['Id']}")).json()["KycStatus"] == "APPROVED"


async def test_the_tolerance_is_configured(database_url: str) -> None:
    from finplat.app import create_app

    settings = Settings(database_url=database_url, provider_callback_tolerance_seconds=30)
    app = create_app(settings)
    body = b"{}"
    signed = signed_at(settings.provider_callback_secret, body, utcnow() - timedelta(minutes=1))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://finplat.test") as client:
        response = await post_callback(client, body, signed)
    await app.state.engine.dispose()
    assert (response.status_code, response.json()["Code"]) == (
        401,
        "CALLBACK_TIMESTAMP_OUT_OF_TOLERANCE",
    )


async def test_callback_without_a_signature_is_refused(
    anonymous: httpx.AsyncClient, tenant: Tenant
) -> None:
    body = review_callback(tenant.company_id, "nobody")
    response = await anonymous.post(
        "/providers/identity/callbacks", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 401


async def test_malformed_callback_is_a_400(
    anonymous: httpx.AsyncClient, settings: Settings
) -> None:
    body = b'{"id": 5}'
    response = await post_callback(
        anonymous, body, inbound.signature_headers(settings.provider_callback_secret, body)
    )
    assert (response.status_code, response.json()["Code"]) == (400, "MALFORMED_CALLBACK")


async def test_callback_for_another_company_cannot_touch_this_one(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    make_tenant: object,
    settings: Settings,
) -> None:
    user = await create_user(api)
    session = await start_kyc(api, user["Id"])
    other: Tenant = await make_tenant("Other Co")  # type: ignore[operator]
    body = review_callback(other.company_id, session["ApplicantId"], event_id="idn_evt_x")
    response = await post_callback(
        anonymous, body, inbound.signature_headers(settings.provider_callback_secret, body)
    )
    assert response.status_code == 200
    assert (await api.get(f"/api/v2/users/{user['Id']}")).json()["KycStatus"] == "PENDING"


async def test_unknown_provider_path_is_a_400(anonymous: httpx.AsyncClient) -> None:
    signed = {inbound.TIMESTAMP_HEADER: "0", inbound.SIGNATURE_HEADER: "0" * 64}
    response = await post_callback(anonymous, b"{}", signed, provider="nobody")
    assert response.status_code == 400


async def test_callbacks_are_refused_when_no_secret_is_configured_outside_the_sandbox(
    database_url: str,
) -> None:
    from finplat.app import create_app

    app = create_app(
        Settings(database_url=database_url, sandbox=False, secret_key=SCANNER.watch_key(new_key()))
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://finplat.test") as client:
        response = await post_callback(client, b"{}", inbound.signature_headers("", b"{}"))
    await app.state.engine.dispose()
    assert (response.status_code, response.json()["Code"]) == (
        503,
        "PROVIDER_CALLBACKS_NOT_CONFIGURED",
    )


async def post_signed(
    client: httpx.AsyncClient, settings: Settings, body: bytes, provider: str = "identity"
) -> httpx.Response:
    signed = inbound.signature_headers(settings.provider_callback_secret, body)
    return await post_callback(client, body, signed, provider)


async def recorded_callbacks(session_factory: async_sessionmaker[AsyncSession]) -> int:
    async with session_factory() as db:
        return int((await db.execute(select(func.count(ProviderCallback.id)))).scalar_one())


async def test_a_callback_whose_event_id_holds_a_nul_is_a_400_and_not_recorded(
    anonymous: httpx.AsyncClient,
    tenant: Tenant,
    settings: Settings,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    # PostgreSQL text cannot hold NUL: this was a 500 there.
    body = review_callback(tenant.company_id, "nobody", event_id="idn\x00evt")
    response = await post_signed(anonymous, settings, body)
    assert (response.status_code, response.json()["Code"]) == (400, "MALFORMED_CALLBACK")
    assert response.json()["ValidationErrors"].keys() == {"id"}
    assert await recorded_callbacks(session_factory) == 0


async def test_a_callback_with_a_nul_in_its_data_is_a_400_and_not_applied(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    tenant: Tenant,
    settings: Settings,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    user = await create_user(api)
    session = await start_kyc(api, user["Id"])
    body = review_callback(tenant.company_id, session["ApplicantId"] + "\x00")
    response = await post_signed(anonymous, settings, body)
    assert (response.status_code, response.json()["Code"]) == (400, "MALFORMED_CALLBACK")
    assert response.json()["ValidationErrors"] == {"data": ["Text must not contain NUL (\\u0000)."]}
    assert await recorded_callbacks(session_factory) == 0
    assert (await api.get(f"/api/v2/users/{user['Id']}")).json()["KycStatus"] == "PENDING"


async def test_a_callback_whose_company_id_is_beyond_the_id_range_is_a_400(
    anonymous: httpx.AsyncClient, settings: Settings
) -> None:
    # Beyond a BIGINT: this was a 500 on PostgreSQL.
    body = review_callback(2**63, "nobody")
    response = await post_signed(anonymous, settings, body)
    assert (response.status_code, response.json()["Code"]) == (400, "MALFORMED_CALLBACK")
    assert response.json()["ValidationErrors"].keys() == {"companyId"}


async def test_a_callback_nested_beyond_the_parsers_depth_is_a_400(
    anonymous: httpx.AsyncClient, tenant: Tenant, settings: Settings
) -> None:
    nested = b"[" * 10_000 + b"]" * 10_000
    body = b'{"id":"idn_deep","type":"applicant.reviewed","companyId":%d,"data":{"x":%s}}' % (
        tenant.company_id,
        nested,
    )
    response = await post_signed(anonymous, settings, body)
    assert (response.status_code, response.json()["Code"]) == (400, "MALFORMED_CALLBACK")


def _review_naming(company_id: int, user_id: object, event_id: str) -> bytes:
    envelope = json.loads(review_callback(company_id, "idn_applicant_unrecorded", event_id))
    envelope["data"]["externalUserId"] = f"{company_id}-{user_id}"
    return json.dumps(envelope).encode()


async def test_a_review_for_an_undecided_user_whose_start_is_unrecorded_is_refused_for_later(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    tenant: Tenant,
    settings: Settings,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    user = await create_user(api)
    body = _review_naming(tenant.company_id, user["Id"], "idn_evt_early")
    response = await post_callback(
        anonymous, body, inbound.signature_headers(settings.provider_callback_secret, body)
    )
    assert (response.status_code, response.json()["Code"]) == (409, "KYC_REVIEW_BEFORE_START")
    async with session_factory() as db:
        stmt = select(func.count()).where(ProviderCallback.event_id == "idn_evt_early")
        assert (await db.execute(stmt)).scalar_one() == 0  # a redelivery is processed afresh
    assert (await api.get(f"/api/v2/users/{user['Id']}")).json()["KycStatus"] == "NOT_STARTED"


async def test_a_review_for_an_unknown_applicant_of_no_undecided_user_is_acknowledged(
    api: httpx.AsyncClient, anonymous: httpx.AsyncClient, tenant: Tenant, settings: Settings
) -> None:
    decided = await approved_user(api)
    for event_id, user_id in (("idn_evt_a", decided["Id"]), ("idn_evt_b", 999_999_999)):
        body = _review_naming(tenant.company_id, user_id, event_id)
        response = await post_callback(
            anonymous, body, inbound.signature_headers(settings.provider_callback_secret, body)
        )
        assert response.status_code == 200, response.text
    assert (await api.get(f"/api/v2/users/{decided['Id']}")).json()["KycStatus"] == "APPROVED"
