"""How many SQL statements, commits and ORM flushes a money operation's request costs, counted,
not timed.

Each statement is a round trip and a pass through SQLAlchemy's statement machinery, and each
commit a WAL flush: together they are most of what an ordinary money operation costs the
server (docs/performance.md). A flush of the ORM's unit of work writing an object costs nearly
three times the same write as a statement built once, so the hot paths write their rows that
way, and the changes of the objects they go on using (the card, the funding, the purchase)
with `CompanyRepository.save`: one UPDATE of the changed columns, no flush.
These budgets are today's counts; a change that needs more must say why here, in the same
commit, and a change that needs fewer lowers them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.orm import Session

from finplat.config import Settings
from finplat.mor.access import PREFIX
from tests.banking.fx import steps as fx
from tests.banking.payouts import steps as payouts
from tests.banking.steps import create_budget, credit, funded_user
from tests.cards.funding.steps import active_card, purchase, route_only, topup, unload
from tests.cards.steps import approved_card_user, order, order_body, ordered_card
from tests.cards.transactions.steps import ask_in_real_time, provider_card_ref
from tests.conftest import Tenant
from tests.factories import user_payload
from tests.mor.card_steps import mor_card
from tests.payments import steps as payments
from tests.vouchers import steps as vouchers

T = TypeVar("T")

# (statements, commits, flushes). Statements that carry data (not transaction control), and
# units of work committed: in the tests each unit of work is a savepoint of the test's
# transaction, so a commit is a RELEASE. Flushes that wrote something: none left on these
# paths (a top-up's and an unload's new funding is `CompanyRepository.create`d, its card's
# changes and the purchase's are saved, see above).
# A top-up's master debit tries one random shard first; a shard without the money costs two
# statements more (the shards' balances read, the debit of one that holds it). The card's
# discount code is one read (26 when the first shard holds the money). The company's master and
# fee accounts and the card's are one read. A posting changes its balance rows with one
# statement executed once for all of them (`ledger.repository.add_deltas`).
TOPUP_BUDGET = (28, 4, 0)
UNLOAD_BUDGET = (24, 4, 0)
# A sandbox authorization is two requests' work (issue 32). The real-time decision: the card read
# with its lock and whether its company has a partner configuration or an active rule (neither
# then read), the card's and the settlement accounts with the card's balance (one read), the
# hold (on the accounts already read; on PostgreSQL its transfer and entries one statement), the
# purchase written once with its decision (its unique key finds an earlier ask; the card's row
# is not written: its balance is its account's). The provider's
# `card.transaction` callback through the inbound path, which a real provider sends as a request of
# its own: its log row (written processed), the company (once: the event reuses it), the card
# locked, the purchase read with whether the event is recorded, the event's record (the hold the
# decision took moves no money again: no account or balance is read), the delivery's bookkeeping
# (marked sent in the callback's own transaction). The answer: the purchase and its card read afresh
# in one statement (the auto top-up does not move them), the card's auto top-up settings (the
# decision said whether the balance is a partner's, which has none), one commit for the answer's
# reads.
AUTHORIZATION_BUDGET = (24, 6, 0)
# The card provider's real-time request alone (issue 32's decision; no key to check): the card
# read with its lock, the two facts and the terms of its purchase's two accounts (a company
# that does not exist holds no card: the card's read answers for it), no balance read (the
# hold's conditional UPDATE judges it), the hold, its purchase marked due for the background
# follow-up in the same insert, one commit (5 statements on PostgreSQL).
DECISION_BUDGET = (6, 1, 0)
# A transfer between two budgets of an account: the key's claim; the account (the user read only
# when the account is not theirs), both budgets in one read and both balances in another; the
# reservation (its two accounts read, each balance row changed, the transfer with its entries)
# and the PENDING transaction, checkpointed and committed before the provider is called. The
# sandbox provider (its fault check, on SQLite only; the budgets and the account; its transfer,
# not read back; both balances changed in budget id order, each with its statement line). The
# answer: the transaction locked, the reservation posted from what the request holds (neither
# its entries nor its accounts read again), the transaction settled, the key's answer stored.
# On PostgreSQL each transfer and its entries are one statement (24).
BUDGET_TRANSFER_BUDGET = (28, 4, 0)
# An FX quote (counted since 2026-11-28's night): the account, the default budget, whether it
# holds both currencies (one read), the sandbox's quote (its fault check on SQLite, the budget,
# its quote inserted), the quote written and returned (8 on PostgreSQL).
FX_QUOTE_BUDGET = (10, 4, 0)
# An FX trade: the key's claim; the quote read and claimed (a conditional UPDATE the object
# then reflects), the sell side's budget and settlement accounts (one read), the reservation
# on them, the PENDING transaction, the quote's link to it, the checkpoint (the transaction
# not read again after it); the sandbox (the quote, the trade by key, the quote's earlier
# trade, the trade written and returned, each side's balance and statement line); the
# transaction locked, the reservation posted from what the request holds, the buy side's
# accounts (one read) and its posting on them, the transaction settled, its event, the key's
# answer stored (31 on PostgreSQL; 45, 40 and 34 before 2026-11-28's night and 2026-11-29).
FX_TRADE_BUDGET = (36, 4, 0)
# A collection under an active mandate whose period's allowance was granted (counted since
# 2026-11-29): the key's claim; the mandate locked, its reference looked up under the lock;
# the budget's, the master's and the allowance's two accounts in one read; in a savepoint (a
# parallel collection on another mandate may take the reference) the reservation of money
# and allowance on them (a refused debit leaves no leg applied: no savepoint of its own), the
# PENDING transaction, the collection written and returned, its event (the company read for
# its endpoint), committed before the provider is called; the sandbox (its fault check on
# SQLite, its collection by key, the mandate locked, the budget's debit and its statement
# line, the company's balance ensured, credited and its line, the collection written once in
# its final state); the transaction locked, the reservation posted from what the request
# holds, the transaction settled, its event (the company not read again), the key's answer
# stored; the answer is what the request holds. 26 on PostgreSQL (40 and 3 flushes before).
COLLECTION_BUDGET = (30, 5, 0)
# A payment request (counted since 2026-11-29): the key's claim; the user, their banking
# account and default budget, and its balance in the currency (the budget holds it),
# committed before the provider is called; the sandbox (its fault check on SQLite, its
# request by key, the budget's balance, the request written); the request written and
# returned, its event (the company read for its endpoint), the key's answer stored (10 on
# PostgreSQL; 12 and 2 flushes before: the user read twice, the requests flushed).
PAYMENT_REQUEST_BUDGET = (12, 4, 0)
# Its payer paying it in the sandbox: the request read; the sandbox (its fault check on SQLite,
# its request, the budget credited with its statement line, the request paid (the flush left: the
# sandbox's), the provider's callback queued), the callback claimed for delivery; the callback
# through the inbound path (its log row, the company, the request locked, the budget's and
# settlement accounts in one read, the posting on them, the transaction written with the posting's
# id, the request's changes saved, its event, the delivery's bookkeeping); the request read afresh
# for the answer (19 on PostgreSQL; 22 and 2 flushes before: the accounts read one by one and
# again by the posting, the transaction's posting id written after it, the request flushed).
PAYMENT_PAY_BUDGET = (22, 6, 1)
# Money arriving in a budget (the sandbox's incoming credit, counted since 2026-11-29): the
# sandbox's credit and the provider's callback through the inbound path, where the budget is
# adopted, its and the settlement accounts read together and handed to the posting, and the
# posting's id saved on the transaction without a flush (23 on PostgreSQL; 25 and a flush
# before: the two accounts read one by one, and again by the posting).
INCOMING_CREDIT_BUDGET = (26, 7, 0)
# A voucher redemption's verification (counted since 2026-11-29): the key's claim; the
# redemption locked, its voucher, the settings in effect (the platform's, the company's with
# it); the redemption moved to PROCESSING, the user's and the voucher's counters (the use and
# whether it spends the voucher: one UPDATE); the card top-up of kind VOUCHER (no fee, so no
# fee schedule read) from the voucher funding account, checkpointed; the sandbox's credit;
# the funding completed and posted; the redemption completed and read once, its event; the
# funding alert (the settings already read: not again; the group's need, the funding
# account and its balance); the key's answer stored (32 on PostgreSQL; 37 before).
VOUCHER_VERIFY_BUDGET = (36, 4, 0)
# A payout's check: the account, the budget, the payee and its funding balance; the provider's
# price (the sandbox's fault check on SQLite, its budget); the balance's account with its
# totals in one statement.
PAYOUT_CHECK_BUDGET = (8, 4, 0)
# A payout's create: the claim, the terms resolved as for the check, the approval read and
# used (one conditional UPDATE, which the object then reflects), the budget's and the
# settlement's accounts in one read, the reservation, the PENDING transaction, the approval's
# transaction id, the checkpoint; the provider (the budget and payee it pays from and to are
# those the request has just read; the sandbox: its payment by key, the budget, the payee, the
# payment inserted and returned, its batch, the budget's balance and its statement line); the
# payout locked and noted with the provider's ids, the key's answer stored (24 on PostgreSQL).
PAYOUT_CREATE_BUDGET = (27, 4, 0)
# A card order (the user's second: their account at the card provider is open): the key's
# claim, the user, the product, the account at the provider (the user's approval and the
# product's tier stand for the provider's selection), committed before the provider is called;
# the sandbox (its fault check, on SQLite only; the card written in its produced status and
# returned, the production's callback queued); the card written and returned (its unique key
# answers a retry that lost its lease), its ledger account created without a look for it (a
# new card has none) with its balance row, the account's id on the card, the key's answer
# stored (the new card's balance is zero: not read).
ORDER_CARD_BUDGET = (13, 4, 0)
# A user's creation: the key check (on PostgreSQL below SQLAlchemy, not counted), the company's
# default tier for the account type, the user written and returned (the ExternalUserId's
# unique key answers a duplicate; no read first).
CREATE_USER_BUDGET = (3, 1, 0)
# The aggregated balance: the key check (on PostgreSQL below SQLAlchemy), the user, and the
# ledger totals of their budget balances and live cards summed per currency and provider in
# one statement (the balance rows and cards are not loaded as objects).
BALANCE_BUDGET = (3, 1, 0)
# A listing of produced cards with their accounts: the key check (on PostgreSQL below
# SQLAlchemy), the user, the cards (once), the card accounts with their totals in one
# statement; the provider is not asked (it has nothing to tell: `cards.service.list_cards`).
LIST_CARDS_BUDGET = (4, 1, 0)


@dataclass
class Tally:
    statements: Counter[str] = field(default_factory=Counter)
    commits: int = 0
    flushes: int = 0  # the ORM's unit of work writing new or changed objects
    counting: bool = False

    def seen(self, sql: str) -> None:
        if not self.counting:
            return
        first = sql.lstrip().split(None, 1)[0].upper()
        if first == "RELEASE":
            self.commits += 1
        elif first in ("SELECT", "INSERT", "UPDATE", "DELETE", "WITH"):
            self.statements[first] += 1

    def flushed(self) -> None:
        if self.counting:
            self.flushes += 1

    def within(self, budget: tuple[int, int, int]) -> bool:
        statements, commits, flushes = budget
        return (
            sum(self.statements.values()) <= statements
            and self.commits <= commits
            and self.flushes <= flushes
        )

    def __str__(self) -> str:
        total = sum(self.statements.values())
        return (
            f"{total} statements {dict(self.statements)}, {self.commits} commits, "
            f"{self.flushes} flushes"
        )

    async def count(self, request: Callable[[], Awaitable[T]]) -> T:
        self.statements.clear()
        self.commits = 0
        self.flushes = 0
        self.counting = True
        try:
            return await request()
        finally:
            self.counting = False


@pytest.fixture
async def tally(connection: AsyncConnection) -> AsyncIterator[Tally]:
    counted = Tally()

    def before(_conn: Any, _cursor: Any, sql: str, *_args: Any) -> None:
        counted.seen(sql)

    def flushing(*_args: Any) -> None:
        counted.flushed()

    sync = connection.sync_connection
    assert sync is not None
    event.listen(sync, "before_cursor_execute", before)
    event.listen(Session, "before_flush", flushing)
    try:
        yield counted
    finally:
        event.remove(Session, "before_flush", flushing)
        event.remove(sync, "before_cursor_execute", before)


@pytest.fixture
def lane_off(app: FastAPI) -> Iterator[None]:
    """Top-ups through the route: the batched lane (PostgreSQL) is measured by `make bench`."""
    with route_only(app):
        yield


async def _warm_card(api: httpx.AsyncClient) -> dict[str, Any]:
    """A funded card whose company has made its first top-up (its fee account exists)."""
    card = await active_card(api)
    assert (await topup(api, card, 100, key="first")).status_code == 200
    return card


@pytest.mark.usefixtures("lane_off")
async def test_a_card_topup_stays_within_its_statement_and_commit_budget(
    api: httpx.AsyncClient, tally: Tally
) -> None:
    card = await _warm_card(api)
    response = await tally.count(lambda: topup(api, card, 25, key="counted-topup"))
    assert response.status_code == 200, response.text
    assert tally.within(TOPUP_BUDGET), str(tally)


async def test_a_user_creation_stays_within_its_statement_and_commit_budget(
    api: httpx.AsyncClient, tally: Tally
) -> None:
    await api.get("/api/v2/tiers")  # the key is known to the process
    response = await tally.count(lambda: api.post("/api/v2/users", json=user_payload()))
    assert response.status_code == 201, response.text
    assert tally.within(CREATE_USER_BUDGET), str(tally)


async def test_a_card_order_stays_within_its_statement_and_commit_budget(
    api: httpx.AsyncClient, tally: Tally
) -> None:
    user = await approved_card_user(api)
    await ordered_card(api, user)  # the first card opens the user's account at the provider
    body = await order_body(api, user)
    response = await tally.count(lambda: order(api, body, key="counted-order"))
    assert response.status_code == 201, response.text
    assert response.json()["Status"] == "PENDING"
    assert tally.within(ORDER_CARD_BUDGET), str(tally)


async def test_a_card_unload_stays_within_its_statement_and_commit_budget(
    api: httpx.AsyncClient, tally: Tally
) -> None:
    card = await _warm_card(api)
    response = await tally.count(lambda: unload(api, card, 5, key="counted-unload"))
    assert response.status_code == 200, response.text
    assert tally.within(UNLOAD_BUDGET), str(tally)


async def test_a_card_authorization_stays_within_its_statement_and_commit_budget(
    api: httpx.AsyncClient, tally: Tally
) -> None:
    card = await _warm_card(api)
    await purchase(api, card, 1)  # the card's first purchase makes its accounts
    response = await tally.count(lambda: authorize(api, card, 2.5))
    assert response.status_code == 200, response.text
    assert response.json()["Approved"] is True
    assert tally.within(AUTHORIZATION_BUDGET), str(tally)


async def test_a_real_time_decision_stays_within_its_statement_and_commit_budget(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    tenant: Tenant,
    tally: Tally,
) -> None:
    card = await _warm_card(api)
    await purchase(api, card, 1)  # the card's first purchase makes its accounts
    payload = {
        "companyId": tenant.company_id,
        "authorizationId": "counted-decision",
        "cardId": await provider_card_ref(app, card),
        "amountMinor": 250,
        "currency": "USD",
        "merchant": "Coffee Shop",
    }
    response = await tally.count(
        lambda: ask_in_real_time(anonymous, settings.provider_callback_secret, payload)
    )
    assert response.status_code == 200, response.text
    assert response.json()["Approved"] is True
    assert tally.within(DECISION_BUDGET), str(tally)


async def test_a_budget_transfer_stays_within_its_statement_and_commit_budget(
    api: httpx.AsyncClient, tally: Tally
) -> None:
    user, budget, _ = await payouts.payout_setup(api)
    savings = await create_budget(api, user)
    body = {
        "AccountId": user["AccountId"],
        "Amount": 1.5,
        "Currency": "EUR",
        "DestinationBudgetId": savings["BudgetId"],
    }
    response = await tally.count(
        lambda: api.post(
            f"/api/v2/banking/budgets/{budget['BudgetId']}/transfer",
            params={"userId": user["Id"]},
            json=body,
            headers={"Idempotency-Key": "counted-transfer"},
        )
    )
    assert response.status_code == 201, response.text
    assert response.json()["Status"] == "COMPLETED"
    assert tally.within(BUDGET_TRANSFER_BUDGET), str(tally)


async def test_an_fx_quote_stays_within_its_statement_and_commit_budget(
    api: httpx.AsyncClient, tally: Tally
) -> None:
    user, _ = await funded_user(api, "100.00", "EUR")
    await fx.quoted(api, user)  # the company's first quote
    response = await tally.count(lambda: fx.quote(api, user))
    assert response.status_code == 200, response.text
    assert tally.within(FX_QUOTE_BUDGET), str(tally)


async def test_an_fx_trade_stays_within_its_statement_and_commit_budget(
    api: httpx.AsyncClient, tally: Tally
) -> None:
    user, _ = await funded_user(api, "100.00", "EUR")
    first = await fx.quoted(api, user, amount=10)
    assert (await fx.execute(api, user, first["QuoteId"], key="warm")).status_code == 201
    quote = await fx.quoted(api, user, amount=10)
    response = await tally.count(lambda: fx.execute(api, user, quote["QuoteId"], key="counted"))
    assert response.status_code == 201, response.text
    assert tally.within(FX_TRADE_BUDGET), str(tally)


async def test_a_collection_stays_within_its_statement_and_commit_budget(
    api: httpx.AsyncClient, tally: Tally
) -> None:
    _, _, active = await payments.active_mandate(api)
    assert (await payments.collect(api, active["Id"], 10, "first")).status_code == 201
    response = await tally.count(lambda: payments.collect(api, active["Id"], 10, "counted"))
    assert response.status_code == 201, response.text
    assert response.json()["Status"] == "COMPLETED"
    assert tally.within(COLLECTION_BUDGET), str(tally)


async def test_a_payment_request_stays_within_its_statement_and_commit_budget(
    api: httpx.AsyncClient, tally: Tally
) -> None:
    user, _ = await payments.receiver(api)
    await payments.requested(api, user["Id"])  # the company's first
    response = await tally.count(lambda: payments.create_request(api, user["Id"]))
    assert response.status_code == 201, response.text
    assert tally.within(PAYMENT_REQUEST_BUDGET), str(tally)


async def test_paying_a_payment_request_stays_within_its_statement_and_commit_budget(
    api: httpx.AsyncClient, tally: Tally
) -> None:
    user, _ = await payments.receiver(api)
    first = await payments.requested(api, user["Id"])
    assert (await payments.pay(api, first["Id"])).status_code == 200  # the company's first
    request = await payments.requested(api, user["Id"])
    response = await tally.count(lambda: payments.pay(api, request["Id"]))
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "PAID"
    assert tally.within(PAYMENT_PAY_BUDGET), str(tally)


async def test_an_incoming_credit_stays_within_its_statement_and_commit_budget(
    api: httpx.AsyncClient, tally: Tally
) -> None:
    user, budget = await funded_user(api, "100.00", "EUR")
    await tally.count(lambda: credit(api, user["Id"], budget["BudgetId"], "25.00"))
    assert tally.within(INCOMING_CREDIT_BUDGET), str(tally)


async def _redemption_to_verify(api: httpx.AsyncClient, card: dict[str, Any]) -> tuple[str, str]:
    """A started redemption of a new 5 USD voucher onto `card`, and its one-time code."""
    issued = await vouchers.voucher(api, Value=5)
    started = await vouchers.started(api, issued["PlaintextCode"], card)
    return started["Id"], await vouchers.sent_code(api, started["Id"])


async def test_a_voucher_verification_stays_within_its_statement_and_commit_budget(
    api: httpx.AsyncClient, tally: Tally
) -> None:
    card = await active_card(api, master=0)
    await vouchers.fund_vouchers(api)
    first = await vouchers.verify(api, *await _redemption_to_verify(api, card))
    assert first.status_code == 200, first.text  # the company's first redemption
    redemption, code = await _redemption_to_verify(api, card)
    response = await tally.count(lambda: vouchers.verify(api, redemption, code))
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "COMPLETED"
    assert tally.within(VOUCHER_VERIFY_BUDGET), str(tally)


async def test_a_payout_check_stays_within_its_statement_and_commit_budget(
    api: httpx.AsyncClient, tally: Tally
) -> None:
    user, budget, payee = await payouts.payout_setup(api)
    terms = payouts.terms(user, budget, payee, amount=1.25)
    response = await tally.count(lambda: payouts.check(api, user, terms))
    assert response.status_code == 200, response.text
    assert tally.within(PAYOUT_CHECK_BUDGET), str(tally)


async def test_a_payout_stays_within_its_statement_and_commit_budget(
    api: httpx.AsyncClient, tally: Tally
) -> None:
    user, budget, payee = await payouts.payout_setup(api)
    terms = payouts.terms(user, budget, payee, amount=1.25)
    approval = await payouts.approved(api, user, terms)
    response = await tally.count(
        lambda: payouts.create(
            api, user, terms, approval["ApprovalId"], **{"Idempotency-Key": "counted-payout"}
        )
    )
    assert response.status_code == 201, response.text
    assert tally.within(PAYOUT_CREATE_BUDGET), str(tally)


async def test_a_users_balance_reads_every_total_in_one_statement(
    api: httpx.AsyncClient, tally: Tally
) -> None:
    card = await _warm_card(api)
    response = await tally.count(
        lambda: api.get("/api/v2/banking/balance", params={"userId": card["UserId"]})
    )
    assert response.status_code == 200, response.text
    assert tally.within(BALANCE_BUDGET), str(tally)


async def test_a_users_cards_are_read_once_in_a_listing(
    api: httpx.AsyncClient, tally: Tally
) -> None:
    card = await _warm_card(api)
    response = await tally.count(
        lambda: api.get("/api/v2/cards", params={"userId": card["UserId"]})
    )
    assert response.status_code == 200, response.text
    assert tally.within(LIST_CARDS_BUDGET), str(tally)


async def test_listing_cardholders_reads_their_card_counts_in_one_statement(
    mor_tenant: Tenant, tally: Tally
) -> None:
    api = mor_tenant.client
    await mor_card(api, master=0)
    await tally.count(lambda: api.get(f"{PREFIX}/cardholders"))
    for_one = sum(tally.statements.values())
    for _ in range(2):
        await mor_card(api, master=0)
    response = await tally.count(lambda: api.get(f"{PREFIX}/cardholders"))
    assert len(response.json()["Items"]) == 3, response.text
    assert sum(tally.statements.values()) == for_one, str(tally)


def authorize(api: httpx.AsyncClient, card: dict[str, Any], amount: float) -> Any:
    """The real-time decision and the provider's authorization callback (the hold)."""
    return api.post(
        f"/api/v2/sandbox/cards/{card['Id']}/authorizations",
        params={"userId": card["UserId"]},
        json={"Amount": amount, "Currency": "USD", "Merchant": "Coffee Shop"},
    )
