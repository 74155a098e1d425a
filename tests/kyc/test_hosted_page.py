"""The sandbox verification provider's hosted page (`Url` of the KYC link): served safely,
submitted once with the link's token, and its decision reaches the user's `KycStatus` through
the provider callback."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.app import create_app
from finplat.config import Settings
from finplat.kit.clock import set_clock
from finplat.providers.sandbox import delivery as sandbox_delivery
from tests.onboarding import create_user, start_kyc

PAGE = "/sandbox/identity/verify"


def form(token: str, **overrides: str) -> dict[str, str]:
    fields = {
        "Token": token,
        "DocumentType": "PASSPORT",
        "DocumentNumber": "X1234567",
        "Outcome": "APPROVED",
    }
    fields.update(overrides)
    return fields


async def link(api: httpx.AsyncClient) -> tuple[int, dict[str, Any]]:
    user = await create_user(api)
    return user["Id"], await start_kyc(api, user["Id"])


async def kyc_status(api: httpx.AsyncClient, user_id: int) -> str:
    return str((await api.get(f"/api/v2/users/{user_id}")).json()["KycStatus"])


async def deliver(factory: async_sessionmaker[AsyncSession], settings: Settings) -> None:
    await sandbox_delivery.deliver_due(factory, secret=settings.provider_callback_secret)


def assert_secured(response: httpx.Response) -> None:
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["x-content-type-options"] == "nosniff"


async def test_page_is_served_with_its_security_headers(anonymous: httpx.AsyncClient) -> None:
    response = await anonymous.get(PAGE)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert_secured(response)


async def test_page_asks_for_document_and_labelled_sandbox_decision(
    anonymous: httpx.AsyncClient,
) -> None:
    page = (await anonymous.get(PAGE)).text
    assert '<html lang="en">' in page
    for name in ("Token", "DocumentType", "DocumentNumber", "Outcome"):
        assert f'name="{name}"' in page
    assert '<label for="document-number">' in page
    assert "<legend>Sandbox decision</legend>" in page
    assert 'value="APPROVED" checked' in page


async def test_page_has_no_inline_script_and_loads_its_own(anonymous: httpx.AsyncClient) -> None:
    page = (await anonymous.get(PAGE)).text
    assert '<script src="verify.js"></script>' in page
    assert "<script>" not in page
    script = await anonymous.get(f"{PAGE}.js")
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    assert "location.hash" in script.text
    assert "replaceState" in script.text


@pytest.mark.parametrize(
    ("outcome", "status"),
    [
        ("APPROVED", "APPROVED"),
        ("REJECTED", "REJECTED"),
        ("RESUBMISSION", "RESUBMISSION_REQUIRED"),
    ],
)
async def test_submission_decides_the_users_kyc_once_callbacks_are_delivered(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    session_factory: async_sessionmaker[AsyncSession],
    settings: Settings,
    outcome: str,
    status: str,
) -> None:
    user_id, session = await link(api)
    response = await anonymous.post(PAGE, data=form(session["AccessToken"], Outcome=outcome))
    assert response.status_code == 200, response.text
    assert "Documents submitted" in response.text
    assert_secured(response)
    assert await kyc_status(api, user_id) == "PENDING"
    await deliver(session_factory, settings)
    assert await kyc_status(api, user_id) == status


async def test_decision_defaults_to_approve(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    session_factory: async_sessionmaker[AsyncSession],
    settings: Settings,
) -> None:
    user_id, session = await link(api)
    fields = form(session["AccessToken"])
    del fields["Outcome"]
    assert (await anonymous.post(PAGE, data=fields)).status_code == 200
    await deliver(session_factory, settings)
    assert await kyc_status(api, user_id) == "APPROVED"


async def test_confirmation_never_echoes_the_token_or_document_number(
    api: httpx.AsyncClient, anonymous: httpx.AsyncClient
) -> None:
    _, session = await link(api)
    response = await anonymous.post(PAGE, data=form(session["AccessToken"]))
    assert session["AccessToken"] not in response.text
    assert "X1234567" not in response.text


async def test_token_works_once(api: httpx.AsyncClient, anonymous: httpx.AsyncClient) -> None:
    _, session = await link(api)
    assert (await anonymous.post(PAGE, data=form(session["AccessToken"]))).status_code == 200
    again = await anonymous.post(PAGE, data=form(session["AccessToken"], Outcome="REJECTED"))
    assert again.status_code == 404
    assert again.headers["content-type"].startswith("text/html")
    assert "already used" in again.text
    assert session["AccessToken"] not in again.text


async def test_expired_token_is_refused(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    session_factory: async_sessionmaker[AsyncSession],
    settings: Settings,
) -> None:
    user_id, session = await link(api)
    later = datetime.fromisoformat(session["ExpiresAt"]) + timedelta(seconds=1)
    set_clock(lambda: later)
    response = await anonymous.post(PAGE, data=form(session["AccessToken"]))
    assert response.status_code == 404
    assert "expired" in response.text
    await deliver(session_factory, settings)
    assert await kyc_status(api, user_id) == "PENDING"


async def test_unknown_token_is_not_found(anonymous: httpx.AsyncClient) -> None:
    response = await anonymous.post(PAGE, data=form("sbx_hosted_" + "A" * 43))
    assert response.status_code == 404
    assert_secured(response)


@pytest.mark.parametrize(
    "overrides",
    [
        {"DocumentType": "LIBRARY_CARD"},
        {"DocumentNumber": "12"},
        {"DocumentNumber": "A" * 31},
        {"DocumentNumber": "12 34 56"},
        {"Outcome": "MAYBE"},
        {"Token": "not a token!"},
        {"Token": ""},
    ],
)
async def test_invalid_form_is_a_400_page(
    api: httpx.AsyncClient, anonymous: httpx.AsyncClient, overrides: dict[str, str]
) -> None:
    _, session = await link(api)
    response = await anonymous.post(PAGE, data=form(session["AccessToken"], **overrides))
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("text/html")
    assert 'role="alert"' in response.text
    assert session["AccessToken"] not in response.text


async def test_invalid_form_leaves_the_token_usable(
    api: httpx.AsyncClient, anonymous: httpx.AsyncClient
) -> None:
    _, session = await link(api)
    bad = await anonymous.post(PAGE, data=form(session["AccessToken"], DocumentNumber="1"))
    assert bad.status_code == 400
    assert (await anonymous.post(PAGE, data=form(session["AccessToken"]))).status_code == 200


async def test_missing_field_is_a_400_page(
    api: httpx.AsyncClient, anonymous: httpx.AsyncClient
) -> None:
    _, session = await link(api)
    fields = form(session["AccessToken"])
    del fields["DocumentNumber"]
    response = await anonymous.post(PAGE, data=fields)
    assert response.status_code == 400
    assert "Document number is required." in response.text


async def test_unknown_or_repeated_field_is_a_400_page(
    api: httpx.AsyncClient, anonymous: httpx.AsyncClient
) -> None:
    _, session = await link(api)
    extra = await anonymous.post(PAGE, data={**form(session["AccessToken"]), "Admin": "1"})
    assert extra.status_code == 400
    repeated = await anonymous.post(
        PAGE,
        content=f"Token={session['AccessToken']}&DocumentType=PASSPORT&DocumentType=ID_CARD"
        "&DocumentNumber=X1234567",
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert repeated.status_code == 400
    assert "more than once" in repeated.text


async def test_form_must_be_url_encoded(
    api: httpx.AsyncClient, anonymous: httpx.AsyncClient
) -> None:
    _, session = await link(api)
    response = await anonymous.post(PAGE, json=form(session["AccessToken"]))
    assert response.status_code == 415
    assert response.headers["content-type"].startswith("text/html")


async def test_page_needs_no_api_key_and_is_documented(anonymous: httpx.AsyncClient) -> None:
    document = (await anonymous.get("/openapi.json")).json()
    item = document["paths"][PAGE]
    assert "text/html" in item["get"]["responses"]["200"]["content"]
    assert "application/x-www-form-urlencoded" in item["post"]["requestBody"]["content"]
    assert "security" not in item["post"]
    assert f"{PAGE}.js" in document["paths"]


async def test_page_exists_only_with_the_sandbox(settings: Settings) -> None:
    app = create_app(settings.model_copy(update={"sandbox": False}))
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://finplat.test") as client:
            assert (await client.get(PAGE)).status_code == 404
            assert (await client.post(PAGE, data=form("sbx_hosted_x"))).status_code == 404
    finally:
        await app.state.engine.dispose()
