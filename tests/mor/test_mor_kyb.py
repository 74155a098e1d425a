"""The MOR merchant's KYB (`POST /api/v2/mor/public/kyb`): required fields, submission through
the banking provider, the status the merchant reads, events and resubmission."""

from __future__ import annotations

from typing import Any

import httpx

from finplat.mor.access import PREFIX
from tests.business.steps import events_of
from tests.conftest import Tenant, TenantFactory

KYB = f"{PREFIX}/kyb"
DECISION = "/api/v2/sandbox/mor/kyb/decision"
REQUIRED = {"CompanyName", "RegistrationNumber", "RegistrationCountry", "Industry", "Website"}


def kyb_body(**overrides: Any) -> dict[str, Any]:
    return {
        "CompanyName": "Merchant Ltd",
        "RegistrationNumber": "12345678",
        "RegistrationCountry": "GB",
        "Industry": "Retail",
        "Website": "https://merchant.example.com",
        "AddressLine1": "1 High Street",
        "City": "London",
        "PostalCode": "N1 9GU",
        "UboInformation": {"Structure": "Direct"},
        "Ubos": [
            {
                "FirstName": "Ada",
                "LastName": "Lovelace",
                "Email": "ada@example.com",
                "DateOfBirth": "1980-12-10",
                "Nationality": "GB",
                "OwnershipPercentage": 60,
            }
        ],
        **overrides,
    }


async def submitted(api: httpx.AsyncClient, **overrides: Any) -> dict[str, Any]:
    response = await api.post(KYB, json=kyb_body(**overrides))
    assert response.status_code == 200, response.text
    return dict(response.json())


async def decided(api: httpx.AsyncClient, outcome: str) -> dict[str, Any]:
    response = await api.post(DECISION, json={"Outcome": outcome})
    assert response.status_code == 200, response.text
    return dict(response.json())


async def test_each_missing_required_kyb_field_is_named(mor_tenant: Tenant) -> None:
    response = await mor_tenant.client.post(KYB, json={"City": "London"})
    assert response.status_code == 400
    assert response.json()["Code"] == "VALIDATION_ERROR"
    assert set(response.json()["ValidationErrors"]) == REQUIRED


async def test_a_submitted_kyb_is_submitted_and_announced(mor_tenant: Tenant) -> None:
    kyb = await submitted(mor_tenant.client)
    assert kyb["Status"] == "SUBMITTED"
    assert kyb["Submissions"] == 1
    read = await mor_tenant.client.get(KYB)
    assert read.status_code == 200
    assert read.json()["Status"] == "SUBMITTED"
    assert read.json()["CompanyName"] == "Merchant Ltd"
    [event] = await events_of(mor_tenant.client, "mor.kyb.submitted")
    assert event["Data"]["status"] == "SUBMITTED"


async def test_the_kyb_status_is_404_before_any_submission(mor_tenant: Tenant) -> None:
    response = await mor_tenant.client.get(KYB)
    assert response.status_code == 404
    assert response.json()["Code"] == "MOR_KYB_NOT_FOUND"


async def test_a_first_kyb_without_ubos_is_409(mor_tenant: Tenant) -> None:
    response = await mor_tenant.client.post(KYB, json=kyb_body(Ubos=[]))
    assert response.status_code == 409
    assert response.json()["Code"] == "MOR_KYB_UBOS_REQUIRED"
    assert (await mor_tenant.client.get(KYB)).status_code == 404


async def test_a_kyb_under_review_cannot_be_resubmitted(mor_tenant: Tenant) -> None:
    await submitted(mor_tenant.client)
    again = await mor_tenant.client.post(KYB, json=kyb_body())
    assert again.status_code == 409
    assert again.json()["Code"] == "MOR_KYB_PENDING"


async def test_an_approved_kyb_is_announced_and_cannot_be_resubmitted(
    mor_tenant: Tenant,
) -> None:
    await submitted(mor_tenant.client)
    kyb = await decided(mor_tenant.client, "APPROVED")
    assert kyb["Status"] == "APPROVED"
    assert await events_of(mor_tenant.client, "mor.kyb.in_review")
    assert await events_of(mor_tenant.client, "mor.kyb.approved")
    again = await mor_tenant.client.post(KYB, json=kyb_body())
    assert again.status_code == 409
    assert again.json()["Code"] == "MOR_KYB_APPROVED"


async def test_a_rejected_kyb_is_resubmitted_as_a_new_application(mor_tenant: Tenant) -> None:
    await submitted(mor_tenant.client)
    rejected = await decided(mor_tenant.client, "REJECTED")
    assert rejected["Status"] == "REJECTED"
    assert rejected["Reason"]
    assert await events_of(mor_tenant.client, "mor.kyb.rejected")
    again = await submitted(mor_tenant.client, CompanyName="Merchant Two Ltd")
    assert again["Status"] == "SUBMITTED"
    assert again["Submissions"] == 2
    assert again["Reason"] is None
    assert again["CompanyName"] == "Merchant Two Ltd"
    assert (await decided(mor_tenant.client, "APPROVED"))["Status"] == "APPROVED"


async def test_a_kyb_needing_information_is_completed_and_resubmitted(
    mor_tenant: Tenant,
) -> None:
    await submitted(mor_tenant.client)
    asked = await decided(mor_tenant.client, "NEEDS_INFO")
    assert asked["Status"] == "NEEDS_INFO"
    assert asked["Reason"]
    assert await events_of(mor_tenant.client, "mor.kyb.needs_info")
    # The UBOs already on the application count: a resubmission need not repeat them.
    again = await submitted(mor_tenant.client, Ubos=None, BusinessDescription="Online retail.")
    assert again["Status"] == "SUBMITTED"
    assert again["Submissions"] == 2
    assert len(await events_of(mor_tenant.client, "mor.kyb.submitted")) == 2


async def test_a_merchant_never_reads_another_merchants_kyb(
    mor_tenant: Tenant, make_tenant: TenantFactory
) -> None:
    other = await make_tenant("Other MOR", mor=True)
    await submitted(mor_tenant.client)
    assert (await other.client.get(KYB)).status_code == 404
    decision = await other.client.post(DECISION, json={"Outcome": "APPROVED"})
    assert decision.status_code == 404
    assert (await mor_tenant.client.get(KYB)).json()["Status"] == "SUBMITTED"
