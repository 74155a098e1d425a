"""POST /api/v2/sandbox/company/funding and GET /api/v2/company/balances."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.ledger import service as ledger
from finplat.ledger.core import MAX_BALANCE, Leg
from finplat.ledger.models import LedgerTransfer
from finplat.ledger.verification import verify
from tests.conftest import Tenant, TenantFactory


async def fund(
    api: httpx.AsyncClient, amount: object, currency: str = "USD", **headers: str
) -> httpx.Response:
    return await api.post(
        "/api/v2/sandbox/company/funding",
        json={"Currency": currency, "Amount": amount},
        headers=headers,
    )


async def test_funding_credits_the_master_account(api: httpx.AsyncClient) -> None:
    response = await fund(api, 2500.50)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["Status"] == "COMPLETED"
    assert body["Amount"] == 2500.5
    assert body["Balance"]["Available"] == 2500.5
    balances = (await api.get("/api/v2/company/balances")).json()["Balances"]
    assert balances == [
        {
            "Currency": "USD",
            "Posted": 2500.5,
            "PendingDebits": 0,
            "PendingCredits": 0,
            "Available": 2500.5,
        }
    ]


async def test_fundings_add_up_per_currency(api: httpx.AsyncClient) -> None:
    await fund(api, 100)
    await fund(api, 50.25)
    await fund(api, 1.123456, "USDC")
    balances = {
        b["Currency"]: b for b in (await api.get("/api/v2/company/balances")).json()["Balances"]
    }
    assert balances["USD"]["Available"] == 150.25
    assert balances["USDC"]["Available"] == 1.123456


async def test_funding_records_a_company_funded_event(api: httpx.AsyncClient) -> None:
    transfer = (await fund(api, 10)).json()["TransferId"]
    events = (await api.get("/api/v2/events", params={"type": "company.funded"})).json()["Items"]
    assert [e["Data"]["transferId"] for e in events] == [transfer]
    assert events[0]["Data"]["amount"] == 10


@pytest.mark.parametrize("amount", [0, -5, 1_000_000_001])
async def test_amount_outside_the_range_is_invalid_amount(
    api: httpx.AsyncClient, amount: float
) -> None:
    response = await fund(api, amount)
    assert response.status_code == 400
    assert response.json()["Code"] == "INVALID_AMOUNT"


@pytest.mark.parametrize(
    ("amount", "currency"), [(1.005, "USD"), (1.5, "JPY"), (0.1234567, "USDC")]
)
async def test_more_decimals_than_the_currency_allows_is_rejected_not_rounded(
    api: httpx.AsyncClient, amount: float, currency: str
) -> None:
    response = await fund(api, amount, currency)
    assert response.status_code == 400
    assert response.json()["Code"] == "INVALID_AMOUNT"
    assert (await api.get("/api/v2/company/balances")).json()["Balances"] == []


@pytest.mark.parametrize("currency", ["XXY", "US", "dollars"])
async def test_unknown_currency_is_rejected(api: httpx.AsyncClient, currency: str) -> None:
    response = await fund(api, 10, currency)
    assert response.status_code == 400
    assert "Currency" in response.json()["ValidationErrors"]


async def test_amount_must_be_a_number(api: httpx.AsyncClient) -> None:
    response = await fund(api, "lots")
    assert response.status_code == 400
    assert "Amount" in response.json()["ValidationErrors"]


async def test_balances_are_per_company(make_tenant: TenantFactory) -> None:
    a, b = await make_tenant("A"), await make_tenant("B")
    await fund(a.client, 75)
    assert (await b.client.get("/api/v2/company/balances")).json()["Balances"] == []


async def test_ledger_verifies_after_fundings(tenant: Tenant, session: AsyncSession) -> None:
    for amount in (1, 2.5, 1000):
        await fund(tenant.client, amount)
    report = await verify(session)
    assert report.ok, report.summary()
    posted = (
        await session.execute(
            select(func.count())
            .select_from(LedgerTransfer)
            .where(LedgerTransfer.company_id == tenant.company_id, LedgerTransfer.kind == "post")
        )
    ).scalar_one()
    assert posted == 3


async def test_a_funding_beyond_the_ledgers_balance_limit_is_409_and_reserves_nothing(
    tenant: Tenant, session: AsyncSession
) -> None:
    # The state a thousand fundings of 1,000,000,000 USDC reach: the master account full.
    settlement = await ledger.company_account(
        session,
        company_id=tenant.company_id,
        kind=ledger.CompanyAccount.SETTLEMENT,
        currency="USDC",
    )
    master = await ledger.company_account(
        session, company_id=tenant.company_id, kind=ledger.CompanyAccount.MASTER, currency="USDC"
    )
    for _ in range(master.shard_count):
        share = MAX_BALANCE // master.shard_count
        await ledger.post_transfer(
            session,
            company_id=tenant.company_id,
            legs=[Leg(settlement.id, -share), Leg(master.id, share)],
            code="test.funding",
        )
    await session.commit()
    response = await fund(tenant.client, 1, "USDC")
    assert (response.status_code, response.json()["Code"]) == (409, "BALANCE_LIMIT_EXCEEDED")
    [usdc] = (await tenant.client.get("/api/v2/company/balances")).json()["Balances"]
    assert (usdc["Posted"], usdc["PendingCredits"]) == (MAX_BALANCE // 10**6, 0)
