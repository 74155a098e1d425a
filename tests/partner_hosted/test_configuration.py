"""`PartnerHosted` on the company's configuration over HTTP."""

from __future__ import annotations

import httpx
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from finplat.config import Settings
from finplat.jobs import maintenance_once
from finplat.partner_hosted import configuration as partner_configuration
from finplat.sealing import engines
from finplat.sealing.keyring import SecretKeyring, new_key
from tests.partner_hosted.steps import PARTNER_KEY, configure
from tests.sensitive_data import SCANNER

BASE_URL = "http://localhost:8099/finplat"


async def test_the_configuration_shows_partner_hosted_without_its_key(
    api: httpx.AsyncClient,
) -> None:
    response = await configure(api, BASE_URL + "/", timeout_ms=1200, fallback="APPROVE")
    assert response.status_code == 200, response.text
    expected = {
        "BaseUrl": BASE_URL,
        "ApiKeyLast4": PARTNER_KEY[-4:],
        "TimeoutMs": 1200,
        "FallbackDecision": "APPROVE",
    }
    assert response.json()["PartnerHosted"] == expected
    read = await api.get("/api/v2/company/configuration")
    assert read.json()["PartnerHosted"] == expected
    assert PARTNER_KEY not in read.text


async def test_the_partner_key_is_stored_sealed(api: httpx.AsyncClient, app: FastAPI) -> None:
    assert (await configure(api, BASE_URL)).status_code == 200
    async with app.state.session_factory() as session:
        stored = (await session.execute(text("SELECT api_key FROM partner_hosted_configs"))).all()
    assert len(stored) == 1
    assert PARTNER_KEY not in stored[0][0]
    assert stored[0][0].startswith("fps1:")


async def test_a_timeout_above_the_networks_budget_is_400(api: httpx.AsyncClient) -> None:
    response = await configure(api, BASE_URL, timeout_ms=2001)
    assert response.status_code == 400
    assert response.json()["Code"] == "VALIDATION_ERROR"
    assert (await api.get("/api/v2/company/configuration")).json()["PartnerHosted"] is None


async def test_an_unknown_fallback_is_400(api: httpx.AsyncClient) -> None:
    response = await configure(api, BASE_URL, fallback="MAYBE")
    assert response.status_code == 400


async def test_the_first_configuration_needs_the_key(api: httpx.AsyncClient) -> None:
    response = await configure(api, BASE_URL, api_key=None)
    assert response.status_code == 400
    assert "PartnerHosted.ApiKey" in response.json()["ValidationErrors"]


async def test_a_change_without_the_key_keeps_the_stored_one(api: httpx.AsyncClient) -> None:
    assert (await configure(api, BASE_URL)).status_code == 200
    changed = await configure(api, BASE_URL, timeout_ms=800, api_key=None)
    assert changed.status_code == 200, changed.text
    assert changed.json()["PartnerHosted"]["ApiKeyLast4"] == PARTNER_KEY[-4:]
    assert changed.json()["PartnerHosted"]["TimeoutMs"] == 800


async def test_a_base_url_naming_an_address_is_refused(api: httpx.AsyncClient) -> None:
    response = await configure(api, "http://169.254.169.254/finplat")
    assert response.status_code == 400
    assert response.json()["Code"] == "VALIDATION_ERROR"


async def test_null_turns_partner_hosted_off(api: httpx.AsyncClient) -> None:
    assert (await configure(api, BASE_URL)).status_code == 200
    response = await api.put("/api/v2/company/configuration", json={"PartnerHosted": None})
    assert response.status_code == 200
    assert response.json()["PartnerHosted"] is None


async def test_leaving_partner_hosted_out_leaves_it_as_it_is(api: httpx.AsyncClient) -> None:
    assert (await configure(api, BASE_URL)).status_code == 200
    response = await api.put("/api/v2/company/configuration", json={"RotateWebhookSecret": False})
    assert response.json()["PartnerHosted"]["BaseUrl"] == BASE_URL


async def test_after_a_key_rotation_maintenance_reseals_the_partner_key(
    api: httpx.AsyncClient, app: FastAPI, settings: Settings, engine: AsyncEngine
) -> None:
    assert (await configure(api, BASE_URL)).status_code == 200
    before = engines.keyring_for(engine.dialect)
    rotated = SecretKeyring.from_config(
        SCANNER.watch_key(new_key()), settings.secret_key.get_secret_value()
    )
    engines.register(engine, rotated)
    try:
        await maintenance_once(app.state.session_factory)
        async with app.state.session_factory() as session:
            stored = (
                await session.execute(text("SELECT api_key FROM partner_hosted_configs"))
            ).scalar_one()
            config = await partner_configuration.current(
                session,
                company_id=(await api.get("/api/v2/company/configuration")).json()["CompanyId"],
            )
        assert str(stored).startswith(rotated.current_prefix)
        assert config is not None
        assert config.api_key == PARTNER_KEY
    finally:
        engines.register(engine, before)
