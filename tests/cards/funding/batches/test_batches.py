"""Batched card top-ups (`cards.topup_lane`, `cards.topup_batches`), PostgreSQL only: a keyed
top-up the batches can take is served by one with the route's own answer, byte for byte, and
the rows the route writes; every other request, and every top-up a batch leaves out (a
provider fault, a failure after the reservation), gets the route's answer and completes
exactly once; the edge counts a request once against the rate limit and names the route in
the access log; parallel top-ups are batched together and add up. On SQLite there are no
batches and the route answers every top-up."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections import Counter
from collections.abc import Awaitable
from datetime import datetime
from decimal import Decimal
from typing import Any

import asyncpg
import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.cards.funding.batches import repository as topup_batches_repository
from finplat.cards.funding.batches.service import TopupBatches, TopupBatchStats, render
from finplat.cards.funding.models import CardFunding
from finplat.cards.funding.schemas import TopupResponse
from finplat.cards.models import Card
from finplat.companies import service as companies
from finplat.http.rate_limit import ApiKeyRateLimiter
from finplat.idempotency.models import IdempotencyKey
from finplat.ledger import service as ledger_service
from finplat.ledger.models import LedgerAccount, LedgerEntry, LedgerTransfer
from finplat.ledger.service import CompanyAccount
from finplat.ledger.verification import verify
from finplat.providers.cards.sandbox.bulk_loads import scoped_key
from finplat.providers.cards.sandbox.models import (
    SandboxCardprovMovement,
    SandboxCardprovTransaction,
)
from tests.cards.funding.outcome_steps import cancel, clear_faults, provider_movements
from tests.cards.funding.steps import (
    active_card,
    card_balance,
    fund_master,
    master_available,
    purchase,
    route_only,
    set_fees,
    topup,
)
from tests.conftest import Tenant, TenantFactory
from tests.databases import asyncpg_dsn, backend
from tests.isolated import isolated
from tests.onboarding import set_fault

postgresql = pytest.mark.skipif(backend() != "postgresql", reason="batches need PostgreSQL")
FIELDS = {"Success", "OrderId", "Token", "Value", "Fee", "Message", "CreatedAt"}

# Three requests allowed in a day's window: the sliding window weighs the window before by what
# is left of the current one, so three hits on either side of a minute's edge (a loaded run
# crosses one now and then) would let the fourth through.
THREE_A_DAY = "3/day"


async def batchable_card(api: httpx.AsyncClient, master: float = 1000.0) -> dict[str, Any]:
    """An active card holding 9.90 USD after a keyless top-up of 10 (the route's, which
    creates the company's fee revenue account the batches need); `master` - 10 USD left."""
    card = await active_card(api, master=master)
    assert (await topup(api, card, 10)).status_code == 200
    return card


def batches(app: FastAPI) -> TopupBatches:
    found = app.state.topup_batches
    assert isinstance(found, TopupBatches)
    return found


def snapshot(app: FastAPI) -> TopupBatchStats:
    return dataclasses.replace(batches(app).stats)


def since(app: FastAPI, before: TopupBatchStats) -> tuple[int, int]:
    """(served, handed back) since `before`."""
    now = batches(app).stats
    return now.served - before.served, now.handed_back - before.handed_back


async def completed_topups(
    factory: async_sessionmaker[AsyncSession], card: dict[str, Any]
) -> list[int]:
    """Amounts of the card's completed TOPUP fundings, in order."""
    async with factory() as session:
        rows = await session.execute(
            select(CardFunding.amount_minor)
            .where(
                CardFunding.card_id == card["Id"],
                CardFunding.kind == "TOPUP",
                CardFunding.status == "COMPLETED",
            )
            .order_by(CardFunding.id)
        )
        return list(rows.scalars())


# --------------------------------------------------------------------------- served by a batch


@postgresql
async def test_a_keyed_top_up_is_served_by_a_batch_with_the_routes_answer(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await batchable_card(api)
    before = snapshot(app)
    response = await topup(api, card, 100.5, key="batched")
    assert response.status_code == 200, response.text
    assert since(app, before) == (1, 0)
    body = response.json()
    assert set(body) == FIELDS
    assert (body["Success"], body["Token"], body["Message"]) == (True, "USD", "Top-up completed.")
    assert Decimal(str(body["Value"])) == Decimal("100.5")
    assert Decimal(str(body["Fee"])) == Decimal("1.01")  # 1 % of 100.50, rounded up
    assert await card_balance(api, card) == Decimal("9.9") + Decimal("99.49")
    assert await master_available(api) == Decimal("889.5")


@postgresql
async def test_a_retry_of_a_batched_top_up_replays_the_same_bytes(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await batchable_card(api)
    first = await topup(api, card, 100.1, key="replayed")
    before = snapshot(app)
    again = await topup(api, card, 100.1, key="replayed")
    assert (first.status_code, again.status_code) == (200, 200), again.text
    assert since(app, before) == (0, 1)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert first.headers["content-type"] == again.headers["content-type"] == "application/json"
    assert again.content == first.content
    assert await master_available(api) == Decimal("889.9")


@postgresql
async def test_render_reproduces_the_bytes_the_route_answers(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await active_card(api)
    await set_fees(api, card, TopupFeePercentage=1.5, TopupFixedFee=0.29)
    with route_only(app):
        response = await topup(api, card, 120.1)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    parsed = json.loads(response.content, parse_float=Decimal)
    assert parsed["Fee"] == Decimal("2.1")  # 1.8015 -> 1.81, + 0.29
    rebuilt = TopupResponse(
        Success=parsed["Success"],
        OrderId=parsed["OrderId"],
        Token=parsed["Token"],
        Value=parsed["Value"],
        Fee=parsed["Fee"],
        Message=parsed["Message"],
        CreatedAt=datetime.fromisoformat(parsed["CreatedAt"]),
    )
    assert render(rebuilt) == response.content


@postgresql
async def test_a_keyless_top_up_is_served_by_a_batch(api: httpx.AsyncClient, app: FastAPI) -> None:
    card = await batchable_card(api)
    before = snapshot(app)
    response = await topup(api, card, 50)
    assert response.status_code == 200, response.text
    assert "Idempotent-Replayed" not in response.headers
    assert since(app, before) == (1, 0)
    assert await card_balance(api, card) == Decimal("9.9") + Decimal("49.5")


@postgresql
async def test_two_identical_keyless_top_ups_are_two_top_ups(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await batchable_card(api)
    first, second = await topup(api, card, 50), await topup(api, card, 50)
    assert first.json()["OrderId"] != second.json()["OrderId"]
    assert await completed_topups(app.state.session_factory, card) == [1000, 5000, 5000]
    assert await master_available(api) == Decimal("890")


@postgresql
async def test_a_keyless_top_up_a_batch_never_reserved_stays_keyless(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    await batchable_card(api)
    await left_to_route(app, topup(api, {"Id": 999_999}, 10), 404, "CARD_NOT_FOUND")
    async with app.state.session_factory() as session:
        keys = await session.execute(
            select(IdempotencyKey.key).where(IdempotencyKey.company_id == tenant.company_id)
        )
        assert [k for k in keys.scalars() if k.startswith("nokey-")] == []


@postgresql
async def test_a_keyless_top_up_a_batch_hands_back_after_loading_it_loads_once(
    api: httpx.AsyncClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    card = await batchable_card(api)
    failing = Failing()
    monkeypatch.setattr(topup_batches_repository, "post", failing)
    await left_to_route(app, topup(api, card, 50), 200, None)
    assert failing.calls == 1  # after the bulk load
    assert await completed_topups(app.state.session_factory, card) == [1000, 5000]
    assert await provider_movements(api, card) == [Decimal("9.9"), Decimal("49.5")]
    assert await master_available(api) == Decimal("940")


# The ambiguous inputs: the edge refuses exactly what the route refuses.
AMBIGUOUS = {
    "a Value given twice": b'{"CardId": %d, "Token": "USD", "Value": 100000, "Value": 5}',
    "a CardId given twice": b'{"CardId": 999, "CardId": %d, "Token": "USD", "Value": 10}',
    "a CardId written 1.0": b'{"CardId": %d.0, "Token": "USD", "Value": 10}',
    "a CardId written 1e0": b'{"CardId": %de0, "Token": "USD", "Value": 10}',
    "a Value of NaN": b'{"CardId": %d, "Token": "USD", "Value": NaN}',
    "a body in UTF-16": '{"CardId": %d, "Token": "USD", "Value": 10}',
    "a UTF-8 byte order mark": b'\xef\xbb\xbf{"CardId": %d, "Token": "USD", "Value": 10}',
}


@postgresql
@pytest.mark.parametrize("case", sorted(AMBIGUOUS))
async def test_the_edge_refuses_what_the_route_refuses(
    api: httpx.AsyncClient, app: FastAPI, case: str
) -> None:
    card = await batchable_card(api)
    template = AMBIGUOUS[case]
    body = (
        (template % card["Id"]).encode("utf-16")
        if isinstance(template, str)
        else template % card["Id"]
    )

    async def send(key: str) -> httpx.Response:
        return await api.post(
            "/api/v2/cards/topup",
            content=body,
            headers={"Idempotency-Key": key, "Content-Type": "application/json"},
        )

    with route_only(app):
        by_route = await send("route")
    before = snapshot(app)
    by_edge = await send("edge")
    assert by_route.status_code == 400, by_route.text
    assert (by_edge.status_code, by_edge.json()) == (by_route.status_code, by_route.json())
    assert since(app, before)[0] == 0
    assert await card_balance(api, card) == Decimal("9.9")


def iso(timestamp: str | None) -> bool:
    """Whether `timestamp` is ISO 8601 with its offset (as the provider writes a load's)."""
    return timestamp is not None and datetime.fromisoformat(timestamp).tzinfo is not None


async def written(
    factory: async_sessionmaker[AsyncSession], company_id: int, card: dict[str, Any], key: str
) -> dict[str, Any]:
    """What the keyed top-up `key` on `card` wrote, with ids replaced by what they name."""
    async with factory() as session:
        ikey = (
            await session.execute(
                select(IdempotencyKey).where(
                    IdempotencyKey.company_id == company_id, IdempotencyKey.key == key
                )
            )
        ).scalar_one()
        row = await session.get(CardFunding, ikey.state["funding_id"])
        found = await session.get(Card, card["Id"])
        assert row is not None
        assert found is not None
        pending = await session.get(LedgerTransfer, row.ledger_pending_id)
        assert pending is not None
        posted = (
            await session.execute(
                select(LedgerTransfer).where(LedgerTransfer.pending_id == pending.id)
            )
        ).scalar_one()
        accounts = await session.execute(select(LedgerAccount.id, LedgerAccount.code))
        roles = {account_id: code for account_id, code in accounts.all()}
        legs: dict[str, Counter[tuple[str, str, int]]] = {}
        for transfer in (pending, posted):
            entries = await session.execute(
                select(LedgerEntry).where(LedgerEntry.transfer_id == transfer.id)
            )
            legs[transfer.kind] = Counter(
                (roles[e.account_id], e.layer, e.amount) for e in entries.scalars()
            )
        movement = (
            await session.execute(
                select(SandboxCardprovMovement).where(
                    SandboxCardprovMovement.idempotency_key
                    == scoped_key("cardprov", company_id, row.provider_key)
                )
            )
        ).scalar_one()
        loads = await session.execute(
            select(SandboxCardprovTransaction).where(
                SandboxCardprovTransaction.card_id == found.provider_card_id,
                SandboxCardprovTransaction.type == "LOAD",
            )
        )
    assert ikey.state == {"funding_id": row.id}
    answered = json.loads(ikey.response_body or b"")
    assert answered["OrderId"] == row.id
    assert datetime.fromisoformat(answered["CreatedAt"]) == row.created_at
    assert row.provider_movement_id == movement.movement_id
    assert (pending.reference, posted.pending_id) == (row.provider_key, pending.id)
    assert pending.details == {"cardId": card["Id"], "fee": row.fee_minor, "declineFeePaid": 0}
    return {
        "funding": (row.kind, row.status, row.currency, row.amount_minor, row.fee_minor),
        "funding_more": (row.fee_paid_minor, row.trigger, row.completed_at is not None),
        "provider_call_until_set": row.provider_call_until is not None,
        "key": (ikey.scope, ikey.recovery_point, ikey.response_status, ikey.response_content_type),
        "lease": (ikey.lock_token, ikey.locked_until, ikey.completed_at is not None),
        "request": (ikey.request_method, ikey.request_path),
        "transfers": [
            (t.kind, t.status, t.code, t.expires_at, t.company_id) for t in (pending, posted)
        ],
        "post": (posted.reference, posted.details),
        "legs": legs,
        "card": found.last_balance_minor,
        "movement": (movement.status, movement.amount_minor, movement.balance_minor),
        "loads": sorted(
            (t.status, t.amount_minor, t.currency, t.merchant, t.decline_reason, iso(t.timestamp))
            for t in loads.scalars()
        ),
        "body": ikey.response_body,
        "answer": re.sub(rb'"OrderId":\d+|"CreatedAt":"[^"]+"', b"", ikey.response_body or b""),
    }


@postgresql
async def test_a_batch_writes_what_the_route_writes(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    batched, routed = await batchable_card(api), await batchable_card(api)
    await set_fees(api, batched, TopupFeePercentage=1.5, TopupFixedFee=0.25)
    before = snapshot(app)
    by_batch = await topup(api, batched, 100.01, key="by-batch")
    assert since(app, before) == (1, 0)
    with route_only(app):
        by_route = await topup(api, routed, 100.01, key="by-route")
    assert since(app, before) == (1, 0)
    assert (by_batch.status_code, by_route.status_code) == (200, 200), by_route.text
    factory = app.state.session_factory
    from_batch = await written(factory, tenant.company_id, batched, "by-batch")
    from_route = await written(factory, tenant.company_id, routed, "by-route")
    assert from_batch.pop("body") == by_batch.content
    assert from_route.pop("body") == by_route.content
    assert from_batch == from_route
    assert from_batch["funding"] == ("TOPUP", "COMPLETED", "USD", 10001, 176)
    assert from_batch["funding_more"] == (0, None, True)
    assert from_batch["key"] == ("request", "finished", 200, "application/json")
    assert from_batch["lease"] == (None, None, True)
    assert from_batch["request"] == ("POST", "/api/v2/cards/topup")
    assert from_batch["legs"]["pending"] == Counter(
        {("master", "pending_debit", -10001): 1, ("card", "pending_credit", 9825): 1}
        | {("fee_revenue", "pending_credit", 176): 1}
    )
    assert from_batch["card"] == from_batch["movement"][2] == 990 + 9825


@postgresql
async def test_the_same_key_with_another_body_after_a_batched_top_up_is_reused(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await batchable_card(api)
    assert (await topup(api, card, 50, key="reused")).status_code == 200
    before = snapshot(app)
    response = await topup(api, card, 60, key="reused")
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "IDEMPOTENCY_KEY_REUSED"
    assert since(app, before) == (0, 1)
    assert await master_available(api) == Decimal("940")
    assert await card_balance(api, card) == Decimal("9.9") + Decimal("49.5")


# ------------------------------------------------------------------ left to the route


async def left_to_route(
    app: FastAPI,
    request: Awaitable[httpx.Response],
    status: int,
    code: str | None,
    *,
    submitted: bool = True,
) -> httpx.Response:
    """Send `request`; the route answers it `status` / `code`: no batch served it (one handed
    it back when `submitted`; else it never reached the batches)."""
    before = snapshot(app)
    response = await request
    assert response.status_code == status, response.text
    if code is not None:
        assert response.json()["Code"] == code
    assert since(app, before) == (0, 1 if submitted else 0)
    return response


@postgresql
async def test_an_unknown_card_is_left_to_the_route(api: httpx.AsyncClient, app: FastAPI) -> None:
    await batchable_card(api)
    await left_to_route(app, topup(api, {"Id": 999_999}, 10, key="k"), 404, "CARD_NOT_FOUND")


@postgresql
async def test_another_companys_card_is_left_to_the_route(
    api: httpx.AsyncClient, app: FastAPI, make_tenant: TenantFactory
) -> None:
    card = await batchable_card(api)
    other = await make_tenant("Other Co")
    await batchable_card(other.client)
    await left_to_route(app, topup(other.client, card, 10, key="k"), 404, "CARD_NOT_FOUND")
    assert await card_balance(api, card) == Decimal("9.9")


@postgresql
async def test_a_cancelled_card_is_left_to_the_route(api: httpx.AsyncClient, app: FastAPI) -> None:
    card = await batchable_card(api)
    assert (await cancel(api, card)).status_code == 200
    await left_to_route(app, topup(api, card, 10, key="k"), 409, "CARD_CANCELLED")


@postgresql
async def test_a_master_account_short_of_the_value_is_left_to_the_route(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await batchable_card(api, master=30.0)
    await left_to_route(app, topup(api, card, 25, key="k"), 409, "INSUFFICIENT_FUNDS")
    assert await master_available(api) == Decimal("20")


@postgresql
async def test_a_value_below_the_minimum_is_left_to_the_route(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await batchable_card(api)
    request = topup(api, card, 4.99, key="k")
    await left_to_route(app, request, 400, "INVALID_AMOUNT", submitted=False)


@postgresql
async def test_a_body_with_an_extra_field_is_left_to_the_route(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await batchable_card(api)
    body = {"CardId": card["Id"], "Token": "USD", "Value": 10, "Note": "x"}
    request = api.post("/api/v2/cards/topup", json=body, headers={"Idempotency-Key": "k"})
    response = await left_to_route(app, request, 400, None, submitted=False)
    assert "Note" in response.json()["ValidationErrors"]


@postgresql
async def test_a_body_sent_as_text_is_left_to_the_route(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await batchable_card(api)
    request = api.post(
        "/api/v2/cards/topup",
        content=json.dumps({"CardId": card["Id"], "Token": "USD", "Value": 10}),
        headers={"Idempotency-Key": "k", "Content-Type": "text/plain"},
    )
    await left_to_route(app, request, 415, None, submitted=False)


@postgresql
async def test_a_revoked_api_key_is_left_to_the_route(
    tenant: Tenant, app: FastAPI, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    card = await batchable_card(tenant.client)
    before = snapshot(app)
    assert (await topup(tenant.client, card, 10, key="known")).status_code == 200
    assert since(app, before) == (1, 0)  # the edge knows the key now
    async with session_factory() as session:
        await companies.revoke_api_key(
            session, company_id=tenant.company_id, key_id=tenant.api_key_id
        )
        await session.commit()
    await left_to_route(app, topup(tenant.client, card, 10, key="k"), 401, None)


@postgresql
async def test_a_key_revoked_since_the_edge_knew_it_is_401_even_over_the_rate_limit(
    tenant: Tenant, app: FastAPI, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    card = await batchable_card(tenant.client)
    app.state.rate_limiter = ApiKeyRateLimiter("2/minute")
    assert (await topup(tenant.client, card, 10, key="known")).status_code == 200
    async with session_factory() as session:
        await companies.revoke_api_key(
            session, company_id=tenant.company_id, key_id=tenant.api_key_id
        )
        await session.commit()
    statuses = [(await topup(tenant.client, card, 10, key=f"k{i}")).status_code for i in range(3)]
    assert statuses == [401, 401, 401]


@postgresql
async def test_a_card_owing_a_decline_fee_is_left_to_the_route_which_pays_it(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await active_card(api, master=1000.0)
    await set_fees(api, card)
    assert (await topup(api, card, 5)).status_code == 200
    await set_fees(api, card, DeclineFee=6)
    assert (await purchase(api, card, 50))["DeclineFeeStatus"] == "OUTSTANDING"
    response = await left_to_route(app, topup(api, card, 20, key="k"), 200, None)
    assert "decline fee" in response.json()["Message"]
    assert await card_balance(api, card) == Decimal("5") + Decimal("20") - Decimal("6")


@postgresql
async def test_a_load_the_provider_refuses_is_answered_by_the_route(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await batchable_card(api)
    await set_fault(api, "cardprov", "load", "error", HttpStatus=409)
    await left_to_route(app, topup(api, card, 50, key="k"), 409, "PROVIDER_REJECTED")
    assert await master_available(api) == Decimal("990")
    assert await card_balance(api, card) == Decimal("9.9")
    assert await completed_topups(app.state.session_factory, card) == [1000]


@postgresql
async def test_a_load_that_times_out_is_finished_once_by_a_retry_with_its_key(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await batchable_card(api)
    await set_fault(api, "cardprov", "load", "timeout")
    await left_to_route(app, topup(api, card, 50, key="k"), 503, "PROVIDER_TIMEOUT")
    await clear_faults(api)
    done = await left_to_route(app, topup(api, card, 50, key="k"), 200, None)
    assert done.json()["Value"] == 50
    assert await completed_topups(app.state.session_factory, card) == [1000, 5000]
    assert await master_available(api) == Decimal("940")
    assert await card_balance(api, card) == Decimal("9.9") + Decimal("49.5")
    assert await provider_movements(api, card) == [Decimal("9.9"), Decimal("49.5")]


# ------------------------------------------------------------ failures inside a batch


class Failing:
    """A step that fails each time it is called (and counts the calls)."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, *args: object, **kwargs: object) -> Any:
        self.calls += 1
        raise RuntimeError("down")


@postgresql
async def test_a_failed_bulk_load_hands_the_top_up_back_and_it_completes_once(
    api: httpx.AsyncClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    card = await batchable_card(api)
    failing = Failing()
    monkeypatch.setattr(app.state.providers.card_programs["cardprov"], "load_many", failing)
    await left_to_route(app, topup(api, card, 50, key="k"), 200, None)
    assert failing.calls == 1
    assert await completed_topups(app.state.session_factory, card) == [1000, 5000]
    assert await provider_movements(api, card) == [Decimal("9.9"), Decimal("49.5")]
    assert await master_available(api) == Decimal("940")
    assert await card_balance(api, card) == Decimal("9.9") + Decimal("49.5")


@postgresql
async def test_a_failed_posting_after_the_load_hands_the_top_up_back_and_it_loads_once(
    api: httpx.AsyncClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    card = await batchable_card(api)
    failing = Failing()
    monkeypatch.setattr(topup_batches_repository, "post", failing)
    await left_to_route(app, topup(api, card, 50, key="k"), 200, None)
    assert failing.calls == 1  # after the bulk load
    assert await completed_topups(app.state.session_factory, card) == [1000, 5000]
    # The route's load was answered by the provider with the batch's movement.
    assert await provider_movements(api, card) == [Decimal("9.9"), Decimal("49.5")]
    assert await master_available(api) == Decimal("940")
    assert await card_balance(api, card) == Decimal("9.9") + Decimal("49.5")
    async with app.state.session_factory() as session:
        assert (await verify(session)).ok


@postgresql
async def test_batches_that_cannot_reach_the_database_hand_their_top_ups_back(
    api: httpx.AsyncClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    card = await batchable_card(api)
    calls = 0

    async def unreachable(*args: object) -> None:
        """The batch runner's connection cannot be had (the ordinary route's own can)."""
        nonlocal calls
        calls += 1
        raise ConnectionError("database unreachable")

    monkeypatch.setattr(TopupBatches, "_run_on_one_connection", unreachable)
    # More failures than runners: a runner that failed must not be lost for good.
    for i in range(3):
        await left_to_route(app, topup(api, card, 10, key=f"k{i}"), 200, None)
    assert calls == 3
    monkeypatch.undo()
    before = snapshot(app)
    assert (await topup(api, card, 10, key="again")).status_code == 200
    assert since(app, before) == (1, 0)


# ------------------------------------------------------------------ the edge itself


@postgresql
async def test_a_top_up_handed_back_counts_once_against_the_rate_limit(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    await batchable_card(api)
    app.state.rate_limiter = ApiKeyRateLimiter(THREE_A_DAY)
    for i in range(3):
        request = topup(api, {"Id": 999_999}, 10, key=f"k{i}")
        await left_to_route(app, request, 404, "CARD_NOT_FOUND")
    before = snapshot(app)
    limited = await topup(api, {"Id": 999_999}, 10, key="k3")
    assert limited.status_code == 429, limited.text
    assert limited.json()["Code"] == "RATE_LIMITED"
    assert int(limited.headers["Retry-After"]) >= 1
    assert since(app, before) == (0, 0)


@postgresql
async def test_a_batched_top_up_counts_once_against_the_rate_limit(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await batchable_card(api)
    app.state.rate_limiter = ApiKeyRateLimiter(THREE_A_DAY)
    before = snapshot(app)
    for i in range(3):
        assert (await topup(api, card, 10, key=f"k{i}")).status_code == 200
    assert since(app, before) == (3, 0)
    limited = await topup(api, card, 10, key="k3")
    assert limited.status_code == 429, limited.text
    assert limited.json()["Code"] == "RATE_LIMITED"
    assert "Retry-After" in limited.headers
    assert since(app, before) == (3, 0)


@postgresql
async def test_the_access_log_names_the_route_of_a_batched_top_up(
    api: httpx.AsyncClient, app: FastAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    card = await batchable_card(api)
    before = snapshot(app)
    capsys.readouterr()
    response = await topup(api, card, 10, key="logged")
    assert since(app, before) == (1, 0)
    request_id = response.headers["x-request-id"]
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line[:1] == "{"]
    logged = [line for line in lines if line.get("request_id") == request_id]
    assert [(line["route"], line["status"]) for line in logged if line["event"] == "request"] == [
        ("/api/v2/cards/topup", 200)
    ]


# --------------------------------------------------------------------------- concurrency


@postgresql
async def test_parallel_top_ups_on_many_cards_are_batched_together_and_add_up() -> None:
    async with isolated("topupbatch", database_pool_size=40) as env:
        api = env.client
        cards = [await active_card(api, master=0) for _ in range(16)]
        await fund_master(api, 5000.0)
        assert (await topup(api, cards[0], 10)).status_code == 200  # the company's first
        before = snapshot(env.app)
        responses = await asyncio.gather(
            *(topup(api, card, 100, key=f"k{i}-{card['Id']}") for card in cards for i in (1, 2))
        )
        assert {r.status_code for r in responses} == {200}, [r.text for r in responses]
        assert since(env.app, before) == (32, 0)
        assert batches(env.app).stats.batches - before.batches < 32  # batched together
        assert await master_available(api) == Decimal("4990") - 32 * 100
        balances = [await card_balance(api, card) for card in cards]
        assert sum(balances) == Decimal("9.9") + 32 * Decimal("99")
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok


@postgresql
async def test_parallel_top_ups_of_one_card_under_different_keys_each_complete_once() -> None:
    async with isolated("topupbatch", database_pool_size=40) as env:
        card = await batchable_card(env.client)
        before = snapshot(env.app)
        responses = await asyncio.gather(
            *(topup(env.client, card, 20, key=f"one-card-{i}") for i in range(16))
        )
        assert {r.status_code for r in responses} == {200}, [r.text for r in responses]
        assert since(env.app, before) == (16, 0)
        assert len({r.json()["OrderId"] for r in responses}) == 16
        assert await completed_topups(env.app.state.session_factory, card) == [1000] + [2000] * 16
        assert await master_available(env.client) == Decimal("990") - 16 * 20
        assert await card_balance(env.client, card) == Decimal("9.9") + 16 * Decimal("19.8")
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok


@postgresql
async def test_32_parallel_batched_top_ups_with_one_key_post_once() -> None:
    async with isolated("topupbatch", database_pool_size=40) as env:
        card = await batchable_card(env.client)
        before = snapshot(env.app)
        responses = await asyncio.gather(
            *(topup(env.client, card, 100, key="one-key") for _ in range(32))
        )
        assert {r.status_code for r in responses} == {200}, [r.text for r in responses]
        assert len({r.content for r in responses}) == 1
        assert since(env.app, before) == (1, 31)
        assert await completed_topups(env.app.state.session_factory, card) == [1000, 10000]
        assert await master_available(env.client) == Decimal("890")
        assert await card_balance(env.client, card) == Decimal("9.9") + Decimal("99")
        async with env.app.state.session_factory() as session:
            assert (await verify(session)).ok


@postgresql
async def test_a_batch_locks_ledger_balances_in_the_ledgers_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Single-shard accounts first, by account id, then sharded ones: the order every ledger
    posting takes (`ledger.service`), whichever accounts are sharded. With a one-shard master
    account made before the card's, a batch blocked on the card's balance already holds the
    master's."""
    monkeypatch.setitem(ledger_service._COMPANY_ACCOUNT_RULES, CompanyAccount.MASTER, (False, 1))
    async with isolated("topupbatch", database_pool_size=40) as env:
        await fund_master(env.client, 1000.0)
        card = await batchable_card(env.client, master=0)
        accounts = await ledger_accounts(env.app.state.session_factory, env.company_id)
        master, card_account = accounts["master"], accounts["card"]
        assert master < card_account
        dsn = asyncpg_dsn(env.url)
        holder, prober = await asyncpg.connect(dsn), await asyncpg.connect(dsn)
        try:
            async with holder.transaction():
                await holder.execute(
                    "SELECT 1 FROM ledger_balances WHERE account_id = $1 FOR UPDATE", card_account
                )
                before = snapshot(env.app)
                pending = asyncio.create_task(topup(env.client, card, 25, key="ordered"))
                await waiting_for_a_row_lock(prober)
                with pytest.raises(asyncpg.LockNotAvailableError):
                    async with prober.transaction():
                        await prober.execute(
                            "SELECT 1 FROM ledger_balances WHERE account_id = $1 FOR UPDATE NOWAIT",
                            master,
                        )
            response = await pending
        finally:
            await holder.close()
            await prober.close()
        assert response.status_code == 200, response.text
        assert since(env.app, before) == (1, 0)


async def ledger_accounts(
    factory: async_sessionmaker[AsyncSession], company_id: int
) -> dict[str, int]:
    """The company's ledger account ids by code (one card here)."""
    async with factory() as session:
        rows = await session.execute(
            select(LedgerAccount.code, LedgerAccount.id).where(
                LedgerAccount.company_id == company_id
            )
        )
        return {code: account_id for code, account_id in rows}


async def waiting_for_a_row_lock(pg: asyncpg.Connection) -> None:
    """Until a statement of the database waits for a lock another transaction holds."""
    for _ in range(500):
        waiting = await pg.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock'"
        )
        if waiting:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("no statement came to wait for the held row lock")


# ------------------------------------------------------------------------------- SQLite


@pytest.mark.skipif(backend() != "sqlite", reason="SQLite has no batches")
async def test_on_sqlite_there_are_no_batches_and_the_route_answers(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await batchable_card(api)
    response = await topup(api, card, 50, key="k")
    assert response.status_code == 200, response.text
    assert set(response.json()) == FIELDS
    assert await card_balance(api, card) == Decimal("9.9") + Decimal("49.5")
    assert app.state.topup_batches is None
