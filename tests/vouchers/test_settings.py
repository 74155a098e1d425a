"""Voucher settings: three switches, inheritance, shutdown, and who may change what."""

from __future__ import annotations

from typing import Any

import httpx

from tests.conftest import Tenant, TenantFactory

GLOBAL = "/api/v2/admin/vouchers/settings/global"
COMPANY = "/api/v2/admin/vouchers/settings/company"
STATUSES = "/api/v2/admin/vouchers/company-statuses"
SETTINGS_FIELDS = {
    "GlobalEnabled",
    "CompanyEnabled",
    "InterlaceEnabled",
    "EffectiveEnabled",
    "ShutdownMode",
    "LowBalanceWarningPercentage",
    "VerificationTtlMinutes",
    "DefaultRequiresApproval",
    "DailyReportRecipients",
    "MaximumBatchSize",
    "MaximumImportRows",
    "MaximumMassAssignmentSize",
}


async def _own(tenant: Tenant) -> dict[str, Any]:
    response = await tenant.client.get(COMPANY)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def test_in_the_sandbox_vouchers_start_enabled_at_every_level(tenant: Tenant) -> None:
    settings = await _own(tenant)
    assert set(settings) == SETTINGS_FIELDS
    assert settings["GlobalEnabled"] is settings["CompanyEnabled"] is True
    assert settings["InterlaceEnabled"] is settings["EffectiveEnabled"] is True
    assert settings["ShutdownMode"] == "NONE"
    assert settings["VerificationTtlMinutes"] == 10


async def test_the_operator_switching_vouchers_off_globally_disables_every_company(
    operator: httpx.AsyncClient, make_tenant: TenantFactory
) -> None:
    first, second = await make_tenant("First"), await make_tenant("Second")
    response = await operator.put(GLOBAL, json={"Enabled": False})
    assert response.status_code == 200, response.text
    assert response.json()["GlobalEnabled"] is False
    for tenant in (first, second):
        settings = await _own(tenant)
        assert settings["GlobalEnabled"] is False
        assert settings["CompanyEnabled"] is True
        assert settings["EffectiveEnabled"] is False


async def test_a_company_key_may_not_change_global_settings(
    tenant: Tenant, operator: httpx.AsyncClient
) -> None:
    response = await tenant.client.put(GLOBAL, json={"Enabled": False})
    assert response.status_code == 403
    assert response.json()["Code"] == "OPERATOR_KEY_REQUIRED"
    assert (await operator.get(GLOBAL)).json()["GlobalEnabled"] is True


async def test_a_company_switching_itself_off_leaves_other_companies_on(
    make_tenant: TenantFactory,
) -> None:
    mine, theirs = await make_tenant("Mine"), await make_tenant("Theirs")
    response = await mine.client.put(COMPANY, json={"Enabled": False})
    assert response.status_code == 200, response.text
    assert response.json()["CompanyEnabled"] is False
    assert response.json()["EffectiveEnabled"] is False
    assert (await _own(theirs))["EffectiveEnabled"] is True


async def test_a_company_settings_change_records_an_event(tenant: Tenant) -> None:
    await tenant.client.put(COMPANY, json={"ShutdownMode": "STOP_NEW"})
    events = await tenant.client.get("/api/v2/events", params={"type": "voucher.settings.updated"})
    assert events.status_code == 200, events.text
    (event,) = events.json()["Items"]
    assert event["Data"]["shutdownMode"] == "STOP_NEW"


async def test_only_the_operator_sets_the_card_provider_switch(
    tenant: Tenant, operator: httpx.AsyncClient
) -> None:
    refused = await tenant.client.put(COMPANY, json={"InterlaceEnabled": False})
    assert refused.status_code == 403
    assert refused.json()["Code"] == "OPERATOR_KEY_REQUIRED"
    response = await operator.put(
        COMPANY, params={"companyId": tenant.company_id}, json={"InterlaceEnabled": False}
    )
    assert response.status_code == 200, response.text
    settings = await _own(tenant)
    assert settings["InterlaceEnabled"] is False
    assert settings["EffectiveEnabled"] is False


async def test_only_the_operator_sets_a_company_s_limits(
    tenant: Tenant, operator: httpx.AsyncClient
) -> None:
    refused = await tenant.client.put(COMPANY, json={"MaximumBatchSize": 5})
    assert refused.status_code == 403
    response = await operator.put(
        COMPANY, params={"companyId": tenant.company_id}, json={"MaximumBatchSize": 5}
    )
    assert response.json()["MaximumBatchSize"] == 5


async def test_a_company_follows_the_platform_until_it_sets_its_own_value(
    tenant: Tenant, operator: httpx.AsyncClient
) -> None:
    await operator.put(GLOBAL, json={"VerificationTtlMinutes": 30})
    assert (await _own(tenant))["VerificationTtlMinutes"] == 30
    await tenant.client.put(COMPANY, json={"VerificationTtlMinutes": 5})
    await operator.put(GLOBAL, json={"VerificationTtlMinutes": 45})
    assert (await _own(tenant))["VerificationTtlMinutes"] == 5
    await tenant.client.put(COMPANY, json={"VerificationTtlMinutes": None})
    assert (await _own(tenant))["VerificationTtlMinutes"] == 45


async def test_the_stricter_shutdown_mode_is_in_effect(
    tenant: Tenant, operator: httpx.AsyncClient
) -> None:
    await operator.put(GLOBAL, json={"ShutdownMode": "STOP_NEW"})
    await tenant.client.put(COMPANY, json={"ShutdownMode": "NONE"})
    assert (await _own(tenant))["ShutdownMode"] == "STOP_NEW"
    await tenant.client.put(COMPANY, json={"ShutdownMode": "STOP_ALL"})
    assert (await _own(tenant))["ShutdownMode"] == "STOP_ALL"


async def test_the_operator_lists_every_company_s_status(
    operator: httpx.AsyncClient, make_tenant: TenantFactory
) -> None:
    first, second = await make_tenant("First"), await make_tenant("Second")
    await second.client.put(COMPANY, json={"Enabled": False})
    response = await operator.get(STATUSES)
    assert response.status_code == 200, response.text
    by_id = {item["CompanyId"]: item for item in response.json()}
    assert by_id[first.company_id]["CompanyName"] == "First"
    assert by_id[first.company_id]["EffectiveEnabled"] is True
    assert by_id[second.company_id]["EffectiveEnabled"] is False
    assert list(by_id[first.company_id])[:2] == ["CompanyId", "CompanyName"]
    assert set(by_id[first.company_id]) == SETTINGS_FIELDS | {"CompanyId", "CompanyName"}


async def test_a_company_key_lists_only_its_own_status(make_tenant: TenantFactory) -> None:
    mine, _ = await make_tenant("Mine"), await make_tenant("Theirs")
    response = await mine.client.get(STATUSES)
    assert [item["CompanyId"] for item in response.json()] == [mine.company_id]


async def test_settings_property_names_bind_case_insensitively(tenant: Tenant) -> None:
    response = await tenant.client.put(COMPANY, json={"verificationttlminutes": 7})
    assert response.status_code == 200, response.text
    assert response.json()["VerificationTtlMinutes"] == 7


async def test_invalid_settings_are_400_and_change_nothing(tenant: Tenant) -> None:
    for body in (
        {"VerificationTtlMinutes": 0},
        {"ShutdownMode": "PANIC"},
        {"LowBalanceWarningPercentage": 101},
        {"Enabled": "yes"},
        {"DailyReportRecipients": ["not-an-email"]},
        {"Unknown": True},
    ):
        response = await tenant.client.put(COMPANY, json=body)
        assert response.status_code == 400, (body, response.text)
        assert response.json()["Code"]
    assert (await _own(tenant))["VerificationTtlMinutes"] == 10
