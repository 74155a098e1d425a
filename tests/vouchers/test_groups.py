"""Voucher groups: a name, defaults for their vouchers, idempotent creation."""

from __future__ import annotations

import httpx

from tests.conftest import Tenant, TenantFactory
from tests.vouchers.steps import GROUPS, group

GROUP_FIELDS = {
    "Id",
    "Name",
    "Description",
    "DefaultType",
    "DefaultValue",
    "DefaultCurrency",
    "DefaultPerUserLimit",
    "DefaultTotalUseLimit",
    "DefaultAggregateCap",
    "DefaultRequiresApproval",
    "DefaultRequiresEmail2Fa",
    "DefaultValidFrom",
    "DefaultValidUntil",
    "CampaignReference",
    "CostCentre",
    "Tags",
    "Status",
    "CreatedAt",
}


async def test_a_group_with_only_a_name_gets_the_defaults(api: httpx.AsyncClient) -> None:
    made = await group(api, Name="Spring")
    assert set(made) == GROUP_FIELDS
    assert made["Name"] == "Spring"
    assert made["Status"] == "ACTIVE"
    assert made["DefaultType"] == "FIXED_AMOUNT"
    assert made["DefaultRequiresApproval"] is False
    assert made["DefaultRequiresEmail2Fa"] is True
    assert made["Tags"] == []
    assert made["DefaultValue"] is None


async def test_a_group_keeps_the_defaults_it_is_given(api: httpx.AsyncClient) -> None:
    made = await group(
        api,
        DefaultValue="25.50",
        DefaultCurrency="usd",
        DefaultPerUserLimit=1,
        DefaultTotalUseLimit=100,
        DefaultAggregateCap=1000,
        DefaultRequiresApproval=True,
        DefaultValidFrom="2026-12-01T00:00:00Z",
        DefaultValidUntil="2027-01-01T00:00:00Z",
        CampaignReference="WINTER-26",
        CostCentre="Marketing",
        Tags=["winter", "promo"],
    )
    assert made["DefaultValue"] == 25.5
    assert made["DefaultCurrency"] == "USD"
    assert made["DefaultAggregateCap"] == 1000
    assert made["DefaultRequiresApproval"] is True
    assert made["DefaultValidUntil"].startswith("2027-01-01T00:00:00")
    assert made["Tags"] == ["winter", "promo"]


async def test_a_group_without_a_name_is_400(api: httpx.AsyncClient) -> None:
    for body in ({}, {"Name": ""}, {"Name": None}, {"Description": "no name"}):
        response = await api.post(GROUPS, json=body)
        assert response.status_code == 400, (body, response.text)
        assert response.json()["Code"] == "VALIDATION_ERROR"


async def test_a_group_default_value_without_a_currency_is_400(api: httpx.AsyncClient) -> None:
    response = await api.post(GROUPS, json={"Name": "x", "DefaultValue": 5})
    assert response.status_code == 400
    assert response.json()["Code"] == "INVALID_VOUCHER_TERMS"


async def test_a_group_window_that_ends_before_it_starts_is_400(api: httpx.AsyncClient) -> None:
    response = await api.post(
        GROUPS,
        json={
            "Name": "x",
            "DefaultValidFrom": "2027-01-01T00:00:00Z",
            "DefaultValidUntil": "2026-01-01T00:00:00Z",
        },
    )
    assert response.status_code == 400


async def test_a_group_date_without_an_offset_or_as_a_number_is_400(
    api: httpx.AsyncClient,
) -> None:
    for when in ("2027-01-01T00:00:00", 1700000000, "2027-01-01"):
        response = await api.post(GROUPS, json={"Name": "x", "DefaultValidFrom": when})
        assert response.status_code == 400, when


async def test_group_creation_is_idempotent_with_a_key(api: httpx.AsyncClient) -> None:
    headers = {"Idempotency-Key": "group-1"}
    first = await api.post(GROUPS, json={"Name": "Once"}, headers=headers)
    again = await api.post(GROUPS, json={"Name": "Once"}, headers=headers)
    assert first.status_code == again.status_code == 200
    assert first.json()["Id"] == again.json()["Id"]
    assert again.headers["Idempotent-Replayed"] == "true"
    other = await api.post(GROUPS, json={"Name": "Other"}, headers=headers)
    assert other.status_code == 409


async def test_the_operator_creates_a_group_for_a_company_apart_from_its_keys(
    operator: httpx.AsyncClient, tenant: Tenant
) -> None:
    params = {"companyId": tenant.company_id}
    headers = {"Idempotency-Key": "shared-key"}
    by_operator = await operator.post(GROUPS, params=params, json={"Name": "Op"}, headers=headers)
    by_company = await tenant.client.post(GROUPS, json={"Name": "Co"}, headers=headers)
    assert by_operator.status_code == by_company.status_code == 200
    assert by_operator.json()["Id"] != by_company.json()["Id"]
    listed = await tenant.client.get(
        "/api/v2/vouchers", params={"groupId": by_operator.json()["Id"]}
    )
    assert listed.status_code == 200


async def test_a_company_key_cannot_create_a_group_for_another_company(
    make_tenant: TenantFactory,
) -> None:
    mine, theirs = await make_tenant("Mine"), await make_tenant("Theirs")
    response = await mine.client.post(
        GROUPS, params={"companyId": theirs.company_id}, json={"Name": "Sneaky"}
    )
    assert response.status_code == 404


async def test_group_creation_records_an_event(api: httpx.AsyncClient) -> None:
    made = await group(api)
    events = await api.get("/api/v2/events", params={"type": "voucher.group.created"})
    assert [e["Data"]["groupId"] for e in events.json()["Items"]] == [made["Id"]]
