"""Issuing vouchers: codes from a secure source, shown once, stored as a hash."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import httpx
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.idempotency.models import IdempotencyKey
from finplat.vouchers import codes
from finplat.vouchers.models import Voucher
from tests.conftest import Tenant
from tests.vouchers.steps import GROUPS, group, issue

VOUCHER_FIELDS = {
    "Id",
    "GroupId",
    "Name",
    "Description",
    "MaskedCode",
    "Type",
    "Value",
    "Currency",
    "Status",
    "SuccessfulUses",
    "ReservedUses",
    "PerUserLimit",
    "MaximumTotalUses",
    "RedeemedValue",
    "ReservedValue",
    "MaximumAggregateValue",
    "RequiresWhitelabelApproval",
    "RequiresEmail2Fa",
    "ValidFrom",
    "ValidUntil",
    "CreatedAt",
}
CODE = re.compile(codes.CODE_PATTERN)


async def test_issued_vouchers_carry_their_codes_once_and_the_spec_fields(
    api: httpx.AsyncClient,
) -> None:
    made = await group(api)
    issued = await issue(api, made["Id"], Count=3, Value=25, Currency="USD")
    assert len(issued) == 3
    for voucher in issued:
        assert set(voucher) == VOUCHER_FIELDS | {"PlaintextCode"}
        assert CODE.fullmatch(voucher["PlaintextCode"])
        assert voucher["MaskedCode"].endswith(voucher["PlaintextCode"][-4:])
        assert "****" in voucher["MaskedCode"]
        assert voucher["Status"] == "ACTIVE"
        assert voucher["Value"] == 25
        assert voucher["SuccessfulUses"] == voucher["ReservedUses"] == 0
    assert len({v["PlaintextCode"] for v in issued}) == 3


async def test_only_the_hash_of_a_code_is_stored(
    api: httpx.AsyncClient, session: AsyncSession
) -> None:
    made = await group(api)
    (voucher,) = await issue(api, made["Id"], Value=10, Currency="USD")
    code = voucher["PlaintextCode"]
    row = (await session.execute(select(Voucher).where(Voucher.id == voucher["Id"]))).scalar_one()
    assert row.code_hash == codes.code_hash(code)
    assert code not in repr([getattr(row, c.key) for c in Voucher.__table__.columns])
    assert len(row.code_hash) == len(hashlib.sha256().hexdigest())


async def test_the_list_never_shows_a_code(api: httpx.AsyncClient) -> None:
    made = await group(api)
    issued = await issue(api, made["Id"], Count=2, Value=10, Currency="USD")
    response = await api.get("/api/v2/vouchers")
    assert response.status_code == 200
    body = response.json()
    assert {item["Id"] for item in body["Items"]} == {v["Id"] for v in issued}
    for item in body["Items"]:
        assert set(item) == VOUCHER_FIELDS
    for voucher in issued:
        assert voucher["PlaintextCode"] not in response.text


async def test_a_retried_issue_answers_the_same_vouchers_without_their_codes(
    api: httpx.AsyncClient, session: AsyncSession
) -> None:
    made = await group(api)
    first = await issue(api, made["Id"], key="batch-1", Count=2, Value=10, Currency="USD")
    again = await api.post(
        f"{GROUPS}/{made['Id']}/vouchers",
        json={"Count": 2, "Value": 10, "Currency": "USD"},
        headers={"Idempotency-Key": "batch-1"},
    )
    assert again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert [v["Id"] for v in again.json()["Vouchers"]] == [v["Id"] for v in first]
    assert all(v["PlaintextCode"] is None for v in again.json()["Vouchers"])
    stored = (await session.execute(select(IdempotencyKey.response_body))).scalars().all()
    for voucher in first:
        assert not any(voucher["PlaintextCode"].encode() in (body or b"") for body in stored)
    assert (await api.get("/api/v2/vouchers")).json()["Items"].__len__() == 2


async def test_vouchers_take_the_group_defaults_unless_overridden(api: httpx.AsyncClient) -> None:
    made = await group(
        api,
        DefaultValue=20,
        DefaultCurrency="EUR",
        DefaultTotalUseLimit=5,
        DefaultPerUserLimit=1,
        DefaultRequiresApproval=True,
        DefaultValidUntil="2030-01-01T00:00:00Z",
    )
    (defaulted,) = await issue(api, made["Id"])
    assert defaulted["Value"] == 20
    assert defaulted["Currency"] == "EUR"
    assert defaulted["MaximumTotalUses"] == 5
    assert defaulted["PerUserLimit"] == 1
    assert defaulted["RequiresWhitelabelApproval"] is True
    assert defaulted["RequiresEmail2Fa"] is True
    assert defaulted["Name"] == made["Name"]
    (overridden,) = await issue(
        api,
        made["Id"],
        Value=7.5,
        MaximumTotalUses=None,
        RequiresWhitelabelApproval=False,
        RequiresEmail2Fa=False,
        Name="Special",
        MaximumAggregateValue=30,
    )
    assert overridden["Value"] == 7.5
    assert overridden["MaximumTotalUses"] is None
    assert overridden["PerUserLimit"] == 1
    assert overridden["RequiresWhitelabelApproval"] is False
    assert overridden["RequiresEmail2Fa"] is False
    assert overridden["Name"] == "Special"
    assert overridden["MaximumAggregateValue"] == 30


async def test_a_voucher_without_a_value_here_or_in_the_group_is_400(
    api: httpx.AsyncClient,
) -> None:
    made = await group(api)
    response = await api.post(f"{GROUPS}/{made['Id']}/vouchers", json={"Count": 1})
    assert response.status_code == 400
    assert response.json()["Code"] == "INVALID_VOUCHER_TERMS"


async def test_a_value_with_more_decimals_than_its_currency_is_400(api: httpx.AsyncClient) -> None:
    made = await group(api)
    response = await api.post(
        f"{GROUPS}/{made['Id']}/vouchers", json={"Value": "1.005", "Currency": "USD"}
    )
    assert response.status_code == 400
    assert response.json()["Code"] == "INVALID_VOUCHER_TERMS"


async def test_more_vouchers_than_the_batch_size_is_400(
    tenant: Tenant, operator: httpx.AsyncClient
) -> None:
    await operator.put(
        "/api/v2/admin/vouchers/settings/company",
        params={"companyId": tenant.company_id},
        json={"MaximumBatchSize": 2},
    )
    made = await group(tenant.client)
    response = await tenant.client.post(
        f"{GROUPS}/{made['Id']}/vouchers", json={"Count": 3, "Value": 1, "Currency": "USD"}
    )
    assert response.status_code == 400
    assert response.json()["Code"] == "BATCH_TOO_LARGE"
    assert (await tenant.client.get("/api/v2/vouchers")).json()["Items"] == []


async def test_issuing_into_an_unknown_group_is_404(api: httpx.AsyncClient) -> None:
    response = await api.post(
        f"{GROUPS}/00000000-0000-4000-8000-000000000000/vouchers",
        json={"Value": 1, "Currency": "USD"},
    )
    assert response.status_code == 404
    assert response.json()["Code"] == "VOUCHER_GROUP_NOT_FOUND"


async def test_the_list_pages(api: httpx.AsyncClient) -> None:
    made = await group(api)
    issued = await issue(api, made["Id"], Count=5, Value=1, Currency="USD")
    seen: list[Any] = []
    for page in (1, 2, 3):
        body = (await api.get("/api/v2/vouchers", params={"page": page, "pageSize": 2})).json()
        seen += [item["Id"] for item in body["Items"]]
        assert body["HasMore"] is (page < 3)
    assert sorted(seen) == sorted(v["Id"] for v in issued)


async def test_an_expired_voucher_is_listed_expired(api: httpx.AsyncClient) -> None:
    made = await group(api)
    await issue(
        api,
        made["Id"],
        Value=1,
        Currency="USD",
        ValidFrom="2020-01-01T00:00:00Z",
        ValidUntil="2021-01-01T00:00:00Z",
    )
    (item,) = (await api.get("/api/v2/vouchers")).json()["Items"]
    assert item["Status"] == "EXPIRED"


async def test_codes_read_back_forgivingly() -> None:
    code = codes.new_code()
    sloppy = code.lower().replace("-", " ").replace("0", "o").replace("1", "l")
    assert codes.code_hash(sloppy) == codes.code_hash(code)
    assert codes.code_hash(code.replace("-", "")) == codes.code_hash(code)
