"""Money arriving from outside: the provider's `payment.received` callback credits a budget
once per provider `paymentId`, whatever event ids the provider sends it under."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.banking.incoming import MAX_INCOMING_MINOR
from finplat.banking.models import BankingBudget
from finplat.config import Settings
from finplat.ledger.verification import verify
from tests.banking.steps import available, banking_user, create_budget, default_budget
from tests.callbacks import signed
from tests.conftest import Tenant
from tests.databases import backend
from tests.isolated import isolated


def payment_received(
    settings: Settings,
    *,
    company_id: int,
    event_id: str,
    payment_id: str,
    account_id: str,
    provider_budget_id: str,
    budget_name: str | None = "Main",
    changes: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A signed `payment.received` callback of 10.00 EUR: its POST's keyword arguments. Without
    `budget_name`, the data has the port's documented fields only; `changes` replace fields."""
    data: dict[str, Any] = {
        "paymentId": payment_id,
        "accountId": account_id,
        "budgetId": provider_budget_id,
        "currency": "EUR",
        "amountMinor": 1000,
        "scheme": "SEPA",
        "senderName": "Ada Lovelace",
    }
    if budget_name is not None:
        data |= {"budgetName": budget_name, "budgetIsDefault": True}
    data |= changes or {}
    return signed(
        settings.provider_callback_secret,
        company_id=company_id,
        type_="payment.received",
        data=data,
        event_id=event_id,
    )


async def send(
    anonymous: httpx.AsyncClient,
    settings: Settings,
    tenant: Tenant,
    user: dict[str, Any],
    provider_budget: str,
    *,
    event_id: str,
    payment_id: str,
    budget_name: str | None = "Main",
    **changes: Any,
) -> httpx.Response:
    """Send one signed `payment.received` callback for the user's account."""
    callback = payment_received(
        settings,
        company_id=tenant.company_id,
        event_id=event_id,
        payment_id=payment_id,
        account_id=user["AccountId"],
        provider_budget_id=provider_budget,
        budget_name=budget_name,
        changes=changes,
    )
    return await anonymous.post("/providers/bankprov/callbacks", **callback)


async def deliver(
    anonymous: httpx.AsyncClient,
    settings: Settings,
    tenant: Tenant,
    user: dict[str, Any],
    provider_budget: str,
    *,
    event_id: str,
    payment_id: str,
    budget_name: str | None = "Main",
) -> None:
    """Deliver one signed `payment.received` callback for the user's account; acknowledged."""
    response = await send(
        anonymous,
        settings,
        tenant,
        user,
        provider_budget,
        event_id=event_id,
        payment_id=payment_id,
        budget_name=budget_name,
    )
    assert response.status_code == 200, response.text


async def provider_budget_id(factory: async_sessionmaker[AsyncSession], budget_id: str) -> str:
    async with factory() as db:
        stmt = select(BankingBudget.provider_budget_id).where(BankingBudget.id == budget_id)
        return str((await db.execute(stmt)).scalar_one())


async def incoming(api: httpx.AsyncClient, user_id: int) -> list[dict[str, Any]]:
    response = await api.get(
        "/api/v2/transactions", params={"userId": user_id, "types": "INCOMING_PAYMENT"}
    )
    assert response.status_code == 200, response.text
    return list(response.json()["Items"])


async def received_events(api: httpx.AsyncClient) -> int:
    response = await api.get("/api/v2/events", params={"type": "payment.received"})
    assert response.status_code == 200, response.text
    return len(response.json()["Items"])


async def test_a_payment_redelivered_under_a_new_event_id_credits_once(
    tenant: Tenant,
    anonymous: httpx.AsyncClient,
    settings: Settings,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    api = tenant.client
    user = await banking_user(api)
    budget = await default_budget(api, user["Id"])
    provider_budget = await provider_budget_id(session_factory, budget["BudgetId"])
    for event_id in ("evt_first", "evt_redelivered"):
        await deliver(
            anonymous,
            settings,
            tenant,
            user,
            provider_budget,
            event_id=event_id,
            payment_id="bp_in_redelivered",
        )
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("10")
    [credited] = await incoming(api, user["Id"])
    assert credited["Amount"] == 10
    assert isinstance(credited["Metadata"]["ledgerTransferId"], int)
    assert await received_events(api) == 1


async def test_distinct_payment_ids_each_credit(
    tenant: Tenant,
    anonymous: httpx.AsyncClient,
    settings: Settings,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    api = tenant.client
    user = await banking_user(api)
    budget = await default_budget(api, user["Id"])
    provider_budget = await provider_budget_id(session_factory, budget["BudgetId"])
    for n in (1, 2):
        await deliver(
            anonymous,
            settings,
            tenant,
            user,
            provider_budget,
            event_id=f"evt_{n}",
            payment_id=f"bp_in_{n}",
        )
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("20")
    assert len(await incoming(api, user["Id"])) == 2


async def test_a_payment_whose_callback_names_no_budget_keeps_the_budgets_name(
    tenant: Tenant,
    anonymous: httpx.AsyncClient,
    settings: Settings,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    api = tenant.client
    user = await banking_user(api)
    savings = await create_budget(api, user, "Savings")
    await deliver(
        anonymous,
        settings,
        tenant,
        user,
        await provider_budget_id(session_factory, savings["BudgetId"]),
        event_id="evt_unnamed",
        payment_id="bp_in_unnamed",
        budget_name=None,
    )
    # What the platform keeps (a listing would take the name from the provider again).
    async with session_factory() as db:
        stmt = select(BankingBudget.name).where(BankingBudget.id == savings["BudgetId"])
        assert (await db.execute(stmt)).scalar_one() == "Savings"
    assert await available(api, user["Id"], savings["BudgetId"], "EUR") == Decimal("10")


async def refused_as_malformed(
    anonymous: httpx.AsyncClient,
    settings: Settings,
    tenant: Tenant,
    session_factory: async_sessionmaker[AsyncSession],
    **changes: Any,
) -> dict[str, Any]:
    """Send a payment with `changes` for a fresh banking user: 400 `MALFORMED_CALLBACK`, and
    nothing credited or recorded. Returns the error body."""
    api = tenant.client
    user = await banking_user(api)
    budget = await default_budget(api, user["Id"])
    provider_budget = await provider_budget_id(session_factory, budget["BudgetId"])
    response = await send(
        anonymous,
        settings,
        tenant,
        user,
        provider_budget,
        event_id="evt_malformed",
        payment_id=changes.pop("paymentId", "bp_in_malformed"),
        **changes,
    )
    assert (response.status_code, response.json()["Code"]) == (400, "MALFORMED_CALLBACK")
    assert await incoming(api, user["Id"]) == []
    assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("0")
    assert await received_events(api) == 0
    return dict(response.json())


async def test_a_payment_id_longer_than_its_column_is_a_400_and_credits_nothing(
    tenant: Tenant,
    anonymous: httpx.AsyncClient,
    settings: Settings,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    # provider_reference is VARCHAR(64): this was a 500 on PostgreSQL.
    error = await refused_as_malformed(
        anonymous, settings, tenant, session_factory, paymentId="p" * 65
    )
    assert error["ValidationErrors"].keys() == {"data.paymentId"}


async def test_a_payment_in_a_currency_no_budget_holds_is_a_400(
    tenant: Tenant,
    anonymous: httpx.AsyncClient,
    settings: Settings,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    error = await refused_as_malformed(anonymous, settings, tenant, session_factory, currency="XYZ")
    assert error["ValidationErrors"].keys() == {"data.currency"}


async def test_a_fractional_minor_amount_is_a_400_never_truncated(
    tenant: Tenant,
    anonymous: httpx.AsyncClient,
    settings: Settings,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    error = await refused_as_malformed(
        anonymous, settings, tenant, session_factory, amountMinor=1000.5
    )
    assert error["ValidationErrors"].keys() == {"data.amountMinor"}


async def test_an_amount_beyond_the_incoming_maximum_is_a_400(
    tenant: Tenant,
    anonymous: httpx.AsyncClient,
    settings: Settings,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    error = await refused_as_malformed(
        anonymous, settings, tenant, session_factory, amountMinor=MAX_INCOMING_MINOR + 1
    )
    assert error["ValidationErrors"].keys() == {"data.amountMinor"}


@pytest.mark.parametrize("conflicting", [{"amountMinor": 2000}, {"currency": "GBP"}])
async def test_a_payment_id_redelivered_with_another_amount_or_currency_is_a_409(
    conflicting: dict[str, Any],
    tenant: Tenant,
    anonymous: httpx.AsyncClient,
    settings: Settings,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    api = tenant.client
    user = await banking_user(api)
    budget = await default_budget(api, user["Id"])
    provider_budget = await provider_budget_id(session_factory, budget["BudgetId"])
    await deliver(
        anonymous, settings, tenant, user, provider_budget, event_id="evt_1", payment_id="bp_in"
    )
    response = await send(
        anonymous,
        settings,
        tenant,
        user,
        provider_budget,
        event_id="evt_2",
        payment_id="bp_in",
        **conflicting,
    )
    assert (response.status_code, response.json()["Code"]) == (409, "INCOMING_PAYMENT_CONFLICT")
    # The first delivery stands, and only it.
    [credited] = await incoming(api, user["Id"])
    assert (credited["Amount"], credited["Currency"]) == (10, "EUR")
    assert await available(api, user["Id"], budget["BudgetId"], "GBP") == Decimal("0")
    assert await received_events(api) == 1


@pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL concurrency")
async def test_parallel_deliveries_of_one_payment_under_different_event_ids_credit_once() -> None:
    async with isolated("incoming", database_pool_size=20, sandbox_latency_ms=20) as env:
        api = env.client
        user = await banking_user(api)
        budget = await default_budget(api, user["Id"])
        provider_budget = await provider_budget_id(
            env.app.state.session_factory, budget["BudgetId"]
        )
        sent = [
            payment_received(
                env.app.state.settings,
                company_id=env.company_id,
                event_id=f"evt_parallel_{n}",
                payment_id="bp_in_parallel",
                account_id=user["AccountId"],
                provider_budget_id=provider_budget,
            )
            for n in range(6)
        ]
        responses = await asyncio.gather(
            *(api.post("/providers/bankprov/callbacks", **callback) for callback in sent)
        )
        assert [r.status_code for r in responses] == [200] * 6, [r.text for r in responses]
        assert await available(api, user["Id"], budget["BudgetId"], "EUR") == Decimal("10")
        assert len(await incoming(api, user["Id"])) == 1
        assert await received_events(api) == 1
        async with env.app.state.session_factory() as session:
            report = await verify(session)
            assert report.ok, report.summary()
