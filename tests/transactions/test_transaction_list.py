"""GET /api/v2/transactions: newest first, `types` and `statuses` filters, pagination."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.transactions.kinds import TransactionStatus, TransactionType
from tests.banking.steps import banking_user, credit, default_budget
from tests.conftest import Tenant, TenantFactory
from tests.onboarding import create_user
from tests.transactions.steps import listing, pending_transaction


async def credited_user(tenant: Tenant, *amounts: int) -> tuple[int, list[int]]:
    user = await banking_user(tenant.client)
    budget = await default_budget(tenant.client, user["Id"])
    ids = [
        (await credit(tenant.client, user["Id"], budget["BudgetId"], amount, "EUR"))["Id"]
        for amount in amounts
    ]
    return user["Id"], ids


async def test_types_and_statuses_filter_the_list(tenant: Tenant, session: AsyncSession) -> None:
    user_id, credits = await credited_user(tenant, 10, 20)
    payout = await pending_transaction(
        session, company_id=tenant.company_id, user_id=user_id, type_=TransactionType.PAYOUT
    )

    def ids(page: dict[str, Any]) -> list[int]:
        return [item["Id"] for item in page["Items"]]

    api = tenant.client
    assert ids(await listing(api, types="PAYOUT")) == [payout.id]
    assert ids(await listing(api, statuses="COMPLETED")) == sorted(credits, reverse=True)
    assert ids(await listing(api, types=["INCOMING_PAYMENT", "PAYOUT"])) == [
        payout.id,
        *sorted(credits, reverse=True),
    ]
    assert ids(await listing(api, types="PAYOUT", statuses=["COMPLETED", "FAILED"])) == []
    assert ids(await listing(api, userId=user_id, statuses="PENDING")) == [payout.id]
    assert ids(await listing(api, types="FX_TRADE")) == []


async def test_the_list_is_newest_first_in_pages(tenant: Tenant) -> None:
    user_id, credits = await credited_user(tenant, 1, 2, 3)
    first = await listing(tenant.client, userId=user_id, pageSize=2)
    second = await listing(tenant.client, userId=user_id, pageSize=2, page=2)
    assert [i["Id"] for i in first["Items"]] == [credits[2], credits[1]]
    assert first["HasMore"] is True
    assert [i["Id"] for i in second["Items"]] == [credits[0]]
    assert second["HasMore"] is False
    assert [i["Amount"] for i in first["Items"]] == [3, 2]


async def test_without_user_the_list_is_company_wide_and_only_the_companys(
    tenant: Tenant, make_tenant: TenantFactory, session: AsyncSession
) -> None:
    first = await create_user(tenant.client)
    second = await create_user(tenant.client)
    a = await pending_transaction(session, company_id=tenant.company_id, user_id=first["Id"])
    b = await pending_transaction(session, company_id=tenant.company_id, user_id=second["Id"])
    mine = await listing(tenant.client)
    assert [i["Id"] for i in mine["Items"]] == [b.id, a.id]
    other = await make_tenant("Other Ltd")
    assert (await listing(other.client))["Items"] == []


async def test_an_unknown_user_is_not_found(api: httpx.AsyncClient) -> None:
    response = await api.get("/api/v2/transactions", params={"userId": 987_654_321})
    assert response.status_code == 404
    assert response.json()["Code"] == "USER_NOT_FOUND"


async def test_an_unknown_type_or_status_is_invalid(api: httpx.AsyncClient) -> None:
    bad_type = await api.get("/api/v2/transactions", params={"types": "CARD_SPEND"})
    bad_status = await api.get("/api/v2/transactions", params={"statuses": "pending"})
    assert bad_type.status_code == 400
    assert "Types.0" in bad_type.json()["ValidationErrors"]
    assert bad_status.status_code == 400
    assert "Statuses.0" in bad_status.json()["ValidationErrors"]


async def test_the_document_states_the_filters_as_repeatable_enums(
    anonymous: httpx.AsyncClient,
) -> None:
    document = (await anonymous.get("/openapi.json")).json()
    parameters = {
        p["name"]: p for p in document["paths"]["/api/v2/transactions"]["get"]["parameters"]
    }
    for name, enum in (("types", TransactionType), ("statuses", TransactionStatus)):
        schema = parameters[name]["schema"]
        array = next(s for s in schema.get("anyOf", [schema]) if s.get("type") == "array")
        item = array["items"]
        if "$ref" in item:
            item = document["components"]["schemas"][item["$ref"].rsplit("/", 1)[1]]
        assert sorted(item["enum"]) == sorted(e.value for e in enum)
        assert parameters[name].get("explode", True) is True
