"""The sandbox card programme's bulk loads: exactly what `load` would make, or nothing."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.providers.cards.port import BulkCardLoads, CardAction, LoadOrder
from finplat.providers.cards.sandbox.adapter import SandboxCardProgram
from finplat.providers.sandbox import faults
from finplat.providers.sandbox.faults import FaultMode
from finplat.providers.sandbox.models import SandboxCallback
from tests.conftest import Tenant
from tests.databases import backend

on_postgresql = pytest.mark.skipif(backend() != "postgresql", reason="bulk loads: PostgreSQL")


def program(factory: async_sessionmaker[AsyncSession]) -> SandboxCardProgram:
    return SandboxCardProgram(factory, provider="cardprov", bin_prefix="424242", secret="s")


async def issued(cards: SandboxCardProgram, company_id: int, key: str) -> str:
    card = await cards.issue_card(
        company_id=company_id,
        idempotency_key=key,
        holder_account_id="holder-1",
        card_type="VIRTUAL",
        currency="USD",
        nickname=None,
        budget_id=None,
        delivery_address=None,
        design_id=None,
    )
    return card.card_id


async def test_the_sandbox_programme_offers_bulk_loads(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    assert isinstance(program(session_factory), BulkCardLoads)


@pytest.mark.skipif(backend() != "sqlite", reason="the SQLite fallback")
async def test_on_sqlite_every_order_is_left_to_load(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    cards = program(session_factory)
    ref = await issued(cards, tenant.company_id, "c-1")
    assert await cards.load_many([LoadOrder(tenant.company_id, ref, "k-1", 500)]) == [None]


@on_postgresql
async def test_a_bulk_load_is_what_load_would_have_made(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    cards = program(session_factory)
    first = await issued(cards, tenant.company_id, "c-1")
    second = await issued(cards, tenant.company_id, "c-2")
    made = await cards.load_many(
        [
            LoadOrder(tenant.company_id, first, "k-1", 1_250),
            LoadOrder(tenant.company_id, second, "k-2", 700),
        ]
    )
    assert [(m.status, m.amount_minor, m.balance_minor) for m in made if m] == [
        ("COMPLETED", 1_250, 1_250),
        ("COMPLETED", 700, 700),
    ]
    assert made[0] is not None
    assert (
        await cards.movement_by_key(company_id=tenant.company_id, idempotency_key="k-1")
        == (made[0])
    )
    # A repeat through `load` is answered by the key, not made again.
    repeat = await cards.load(
        company_id=tenant.company_id, card_id=first, idempotency_key="k-1", amount_minor=1_250
    )
    assert repeat == made[0]
    assert (await cards.card(company_id=tenant.company_id, card_id=first)).balance_minor == 1_250
    (load,) = await cards.transactions(company_id=tenant.company_id, card_id=first)
    assert (load.type, load.status, load.amount_minor, load.currency) == (
        "LOAD",
        "SETTLED",
        1_250,
        "USD",
    )
    assert isinstance(load.timestamp, str)
    assert "T" in load.timestamp  # ISO 8601, as `load` writes it


@on_postgresql
async def test_a_key_already_used_is_left_to_load(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    cards = program(session_factory)
    ref = await issued(cards, tenant.company_id, "c-1")
    await cards.load(
        company_id=tenant.company_id, card_id=ref, idempotency_key="k-1", amount_minor=300
    )
    assert await cards.load_many([LoadOrder(tenant.company_id, ref, "k-1", 300)]) == [None]
    assert (await cards.card(company_id=tenant.company_id, card_id=ref)).balance_minor == 300


@on_postgresql
async def test_a_card_load_would_refuse_is_left_to_load(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    cards = program(session_factory)
    cancelled = await issued(cards, tenant.company_id, "c-1")
    await cards.change_status(
        company_id=tenant.company_id, card_id=cancelled, action=CardAction.CANCEL
    )
    made = await cards.load_many(
        [
            LoadOrder(tenant.company_id, cancelled, "k-1", 300),
            LoadOrder(tenant.company_id, "cardprov_card_unknown", "k-2", 300),
            LoadOrder(tenant.company_id + 1, await issued(cards, tenant.company_id, "c-2"), "k", 1),
        ]
    )
    assert made == [None, None, None]


@on_postgresql
async def test_an_armed_fault_leaves_the_companys_orders_to_load_and_stays_armed(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    cards = program(session_factory)
    ref = await issued(cards, tenant.company_id, "c-1")
    async with session_factory() as session:
        await faults.set_fault(
            session,
            company_id=tenant.company_id,
            provider="cardprov",
            operation="load",
            mode=FaultMode.ERROR,
            count=1,
        )
        await session.commit()
    assert await cards.load_many([LoadOrder(tenant.company_id, ref, "k-1", 300)]) == [None]
    async with session_factory() as session:
        (armed,) = await faults.list_faults(session, company_id=tenant.company_id)
    assert armed.remaining == 1


@on_postgresql
async def test_a_second_order_for_one_card_is_left_to_load(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    cards = program(session_factory)
    ref = await issued(cards, tenant.company_id, "c-1")
    made = await cards.load_many(
        [
            LoadOrder(tenant.company_id, ref, "k-1", 300),
            LoadOrder(tenant.company_id, ref, "k-2", 400),
        ]
    )
    assert made[0] is not None
    assert made[1] is None
    assert (await cards.card(company_id=tenant.company_id, card_id=ref)).balance_minor == 300


async def transactions_reported(
    session_factory: async_sessionmaker[AsyncSession], company_id: int
) -> int:
    async with session_factory() as session:
        return (
            await session.execute(
                select(func.count())
                .select_from(SandboxCallback)
                .where(
                    SandboxCallback.company_id == company_id,
                    SandboxCallback.type == "card.transaction",
                )
            )
        ).scalar_one()


async def test_a_load_or_unload_is_answered_not_reported_by_callback(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    cards = program(session_factory)
    ref = await issued(cards, tenant.company_id, "c-1")
    await cards.load(
        company_id=tenant.company_id, card_id=ref, idempotency_key="k-1", amount_minor=300
    )
    await cards.unload(
        company_id=tenant.company_id, card_id=ref, idempotency_key="k-2", amount_minor=100
    )
    assert (await cards.card(company_id=tenant.company_id, card_id=ref)).balance_minor == 200
    assert await transactions_reported(session_factory, tenant.company_id) == 0


@on_postgresql
async def test_bulk_loads_are_answered_not_reported_by_callback(
    session_factory: async_sessionmaker[AsyncSession], tenant: Tenant
) -> None:
    cards = program(session_factory)
    ref = await issued(cards, tenant.company_id, "c-1")
    (made,) = await cards.load_many([LoadOrder(tenant.company_id, ref, "k-1", 300)])
    assert made is not None
    assert await transactions_reported(session_factory, tenant.company_id) == 0
