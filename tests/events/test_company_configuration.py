"""GET/PUT /api/v2/company/configuration: webhook URL rules and secret rotation."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from finplat.events import destinations
from tests.conftest import Tenant

CONFIG = "/api/v2/company/configuration"


async def test_configuration_shows_the_company_without_its_secret(tenant: Tenant) -> None:
    body = (await tenant.client.get(CONFIG)).json()
    assert body["CompanyId"] == tenant.company_id
    assert body["WebhookUrl"] is None
    assert body["WebhookEnabled"] is False
    assert body["WebhookSecret"] is None
    assert tenant.webhook_secret not in str(body)


def resolving_to(monkeypatch: pytest.MonkeyPatch, *addresses: str) -> None:
    async def fake_resolve(host: str, port: int) -> list[str]:
        return list(addresses)

    monkeypatch.setattr(destinations, "resolve", fake_resolve)


async def test_url_resolving_to_public_addresses_is_accepted(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    resolving_to(monkeypatch, "93.184.216.34", "2606:2800:220:1::1")
    url = "https://hooks.partner.example/webhooks?v=2"
    response = await tenant.client.put(CONFIG, json={"WebhookUrl": url})
    assert response.status_code == 200, response.text
    assert response.json()["WebhookUrl"] == url
    assert response.json()["WebhookEnabled"] is True


async def test_url_whose_name_does_not_resolve_yet_is_accepted(tenant: Tenant) -> None:
    response = await tenant.client.put(
        CONFIG, json={"WebhookUrl": "https://not-yet.partner.invalid/hooks"}
    )
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.5",
        "192.168.1.10",
        "172.16.0.1",
        "169.254.169.254",
        "fe80::1",
        "fd00:ec2::254",
        "0.0.0.0",  # noqa: S104 - an address that must be refused
        "100.64.0.1",
        "::ffff:10.0.0.1",
    ],
)
async def test_names_resolving_to_private_link_local_or_metadata_addresses_are_refused(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch, address: str
) -> None:
    resolving_to(monkeypatch, "93.184.216.34", address)
    response = await tenant.client.put(CONFIG, json={"WebhookUrl": "https://hooks.evil.example/x"})
    assert response.status_code == 400
    assert response.json()["Code"] == "WEBHOOK_URL_NOT_ALLOWED"
    assert (await tenant.client.get(CONFIG)).json()["WebhookUrl"] is None


@pytest.mark.parametrize(
    "url",
    [
        "ftp://hooks.example.com/x",
        "not a url",
        "https://user:pw@hooks.example.com/x",
        "/relative",
        "http://10.0.0.5/hooks",
        "http://169.254.169.254/latest/meta-data",
        "http://[fd00:ec2::254]/hooks",
        "https://hooks.example.com/with space",
    ],
)
async def test_malformed_urls_and_ip_literals_are_refused(tenant: Tenant, url: str) -> None:
    response = await tenant.client.put(CONFIG, json={"WebhookUrl": url})
    assert response.status_code == 400
    assert "WebhookUrl" in response.json()["ValidationErrors"]


async def test_loopback_is_allowed_under_the_development_setting(tenant: Tenant) -> None:
    for url in ("http://localhost:9/hooks", "http://localhost/h"):
        response = await tenant.client.put(CONFIG, json={"WebhookUrl": url})
        assert response.status_code == 200, (url, response.text)


async def test_loopback_is_refused_without_the_development_setting(
    app: FastAPI, tenant: Tenant
) -> None:
    app.state.settings = app.state.settings.model_copy(update={"allow_loopback_webhooks": False})
    response = await tenant.client.put(CONFIG, json={"WebhookUrl": "http://localhost:9/hooks"})
    assert response.status_code == 400
    assert response.json()["Code"] == "WEBHOOK_URL_NOT_ALLOWED"


async def test_rotating_the_secret_returns_the_new_one_once(tenant: Tenant) -> None:
    rotated = (await tenant.client.put(CONFIG, json={"RotateWebhookSecret": True})).json()
    assert rotated["WebhookSecret"].startswith("whsec_")
    assert rotated["WebhookSecret"] != tenant.webhook_secret
    assert (await tenant.client.get(CONFIG)).json()["WebhookSecret"] is None


async def test_null_url_removes_the_endpoint_and_omitted_url_keeps_it(tenant: Tenant) -> None:
    await tenant.client.put(CONFIG, json={"WebhookUrl": "http://localhost:9/hooks"})
    await tenant.client.put(CONFIG, json={"RotateWebhookSecret": True})
    assert (await tenant.client.get(CONFIG)).json()["WebhookUrl"] == "http://localhost:9/hooks"
    await tenant.client.put(CONFIG, json={"WebhookUrl": None})
    assert (await tenant.client.get(CONFIG)).json()["WebhookUrl"] is None


async def test_configuration_requires_an_api_key(anonymous: httpx.AsyncClient) -> None:
    assert (await anonymous.get(CONFIG)).status_code == 401
