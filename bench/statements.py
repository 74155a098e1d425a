"""SQL statements and commits of one request, for the money operations of `bench/api.py`.

Usage: bench/statements.py [--postgres [URL]] [--show]

Builds the application in this process (`create_app`, no background jobs) on a fresh database
(SQLite under var/, or `--postgres`), sets a company and a customer up through the API over
httpx's ASGI transport (`partner_setup`, as `bench/api.py` does), then sends one request of each
operation and counts, from the first statement to the last of that request:
  statements   data statements through SQLAlchemy (`before_cursor_execute`), by first word;
  control      transaction control sent as SQL (SQLite's `BEGIN IMMEDIATE`, savepoints);
  commits      commits (`commit` events), rollbacks and savepoints likewise;
  lane         on PostgreSQL, `topup` through the batched lane too (a batch of one): its
               statements run on the session's asyncpg connection below SQLAlchemy
               (`finplat.db.prepared.fetch`), each in autocommit, so each is also a commit.
Prints one JSON line per operation; `--show` prints each statement's first line on stderr;
`--repeat N` then sends N more requests of each operation, one after another, and adds the
process CPU time per request (`cpu_us_per_request`: the server's work and the in-process
client's, so compare it with itself, before and after a change).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from api_operations import PROVIDER_SECRET
from fastapi import FastAPI
from partner_setup import (
    active_card,
    active_mandate,
    approved_user,
    card_type_id,
    create_company,
    credit_budget,
    default_budget,
    fund_master,
    idempotency_key,
    open_bank_account,
    open_budget,
    tier_id,
    top_up,
    user_body,
    verified_payee,
    voucher_codes,
)
from run_database import (
    FINPLAT,
    PG_SERVER,
    ROOT,
    BenchDatabase,
    PostgresDatabase,
    SqliteDatabase,
    verify_ledger,
)
from sqlalchemy import event, select

from finplat.app import create_app
from finplat.cards.models import Card
from finplat.config import Settings
from finplat.db import prepared
from finplat.providers import inbound

PAYOUTS = "/api/v2/banking/payouts"
# An approval is verified once and paid once: `--repeat` does not time these again.
SPENT_ONCE = {
    "payout_verify",
    "payout_create",
    "fx_trade",
    "payment_pay",
    "voucher_code",
    "voucher_verify",
}
CONTROL = ("BEGIN", "SAVEPOINT", "RELEASE", "ROLLBACK", "COMMIT")


@dataclass
class Tally:
    statements: Counter[str] = field(default_factory=Counter)
    control: int = 0
    commits: int = 0
    rollbacks: int = 0
    savepoints: int = 0
    lane: int = 0
    shown: list[str] = field(default_factory=list)

    def statement(self, sql: str, *, lane: bool = False) -> None:
        text = " ".join(sql.split())
        first = text.split(" ", 1)[0].upper()
        if first in CONTROL:
            self.control += 1
        elif lane:
            self.lane += 1
        else:
            self.statements[first] += 1
        self.shown.append(("lane: " if lane else "") + text[:160])

    def line(self, op: str, backend: str) -> dict[str, Any]:
        return {
            "op": op,
            "database": backend,
            "statements": sum(self.statements.values()),
            "by_kind": dict(sorted(self.statements.items())),
            "control": self.control,
            "commits": self.commits,
            "rollbacks": self.rollbacks,
            "savepoints": self.savepoints,
            "lane_statements": self.lane,
        }


class Counting:
    """Counts what the apps' engines (and the lane's asyncpg statements) do during a request."""

    def __init__(self, apps: list[FastAPI]) -> None:
        self.tally: Tally | None = None
        for app in apps:
            engine = app.state.engine.sync_engine
            event.listen(engine, "before_cursor_execute", self._cursor)
            event.listen(engine, "commit", lambda _conn: self._add("commits"))
            event.listen(engine, "rollback", lambda _conn: self._add("rollbacks"))
            event.listen(engine, "savepoint", lambda _conn, _name: self._add("savepoints"))
        lane_fetch = prepared.fetch

        async def counted(pg: Any, sql: str, *args: Any) -> Any:
            if self.tally is not None:
                self.tally.statement(sql, lane=True)
            return await lane_fetch(pg, sql, *args)

        prepared.fetch = counted

    def _cursor(self, _conn: Any, _cursor: Any, sql: str, *_args: Any) -> None:
        if self.tally is not None:
            self.tally.statement(sql)

    def _add(self, what: str) -> None:
        if self.tally is not None:
            setattr(self.tally, what, getattr(self.tally, what) + 1)
            self.tally.shown.append(f"-- {what[:-1]}")

    async def count(self, request: Callable[[], Awaitable[httpx.Response]]) -> Tally:
        self.tally = Tally()
        try:
            response = await request()
        finally:
            tally, self.tally = self.tally, None
        if response.status_code >= 300:
            raise RuntimeError(f"{response.status_code} {response.text[:300]}")
        return tally


@dataclass
class Payout:
    """The four requests of a payout, as `bench/api.py`'s `payout_create` sends them: each
    step uses what the one before answered, so they are counted in this order."""

    api: httpx.AsyncClient
    user_id: int
    account_id: str
    budget_id: str
    payee_id: str
    approval: dict[str, Any] = field(default_factory=dict)

    @property
    def terms(self) -> dict[str, Any]:
        return {
            "AccountId": self.account_id,
            "BudgetId": self.budget_id,
            "PayeeId": self.payee_id,
            "Amount": 1.25,
            "Currency": "EUR",
        }

    async def check(self) -> httpx.Response:
        return await self.api.post(
            f"{PAYOUTS}/check", params={"userId": self.user_id}, json=self.terms
        )

    async def initiate(self) -> httpx.Response:
        response = await self.api.post(
            f"{PAYOUTS}/initiate",
            params={"userId": self.user_id},
            json=self.terms,
            headers=idempotency_key("payout"),
        )
        if response.status_code == 201:
            self.approval = response.json()
        return response

    async def verify(self) -> httpx.Response:
        token = {"VerificationToken": self.approval["VerificationToken"]}
        return await self.api.post(
            f"{PAYOUTS}/approvals/{self.approval['ApprovalId']}/verify",
            params={"userId": self.user_id},
            json=token,
        )

    async def create(self) -> httpx.Response:
        return await self.api.post(
            PAYOUTS,
            params={"userId": self.user_id},
            json={**self.terms, "ApprovalId": self.approval["ApprovalId"]},
            headers=idempotency_key("payout"),
        )


@dataclass
class Trade:
    """The FX flow of `bench/api.py`'s `fx_trade`: a quote, then its execution."""

    api: httpx.AsyncClient
    user_id: int
    account_id: str
    quote_id: str = ""

    async def quote(self) -> httpx.Response:
        response = await self.api.post(
            "/api/v2/banking/quotations",
            params={"userId": self.user_id},
            json={
                "AccountId": self.account_id,
                "SellCurrency": "EUR",
                "BuyCurrency": "USD",
                "Amount": 2.5,
                "FixedSide": "SELL",
            },
        )
        if response.status_code == 200:
            self.quote_id = response.json()["QuoteId"]
        return response

    async def execute(self) -> httpx.Response:
        return await self.api.post(
            "/api/v2/banking/trades/execute",
            params={"userId": self.user_id},
            json={"QuoteId": self.quote_id, "AccountId": self.account_id},
            headers=idempotency_key("trade"),
        )


@dataclass
class Collecting:
    """`bench/api.py`'s `payment_request` (a request, then its payer paying it in the sandbox)
    and `collection` (under an active mandate)."""

    api: httpx.AsyncClient
    user_id: int
    mandate_id: str
    request_id: str = ""
    references: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    async def request(self) -> httpx.Response:
        response = await self.api.post(
            "/api/v2/payments/requests",
            params={"userId": self.user_id},
            json={"Amount": 12.5, "Currency": "EUR", "Description": "Dinner"},
            headers=idempotency_key("request"),
        )
        if response.status_code == 201:
            self.request_id = response.json()["Id"]
        return response

    async def pay(self) -> httpx.Response:
        return await self.api.post(
            f"/api/v2/sandbox/payments/requests/{self.request_id}/pay",
            json={"PayerName": "Ada Lovelace"},
        )

    async def collect(self) -> httpx.Response:
        return await self.api.post(
            "/api/v2/payments/collections",
            json={
                "MandateId": self.mandate_id,
                "Amount": 3.5,
                "Currency": "EUR",
                "merchantReferenceId": f"bench-{next(self.references)}",
            },
            headers=idempotency_key("collection"),
        )


@dataclass
class Redeeming:
    """`bench/api.py`'s `voucher_redemption`: the start, the sandbox's one-time code, the
    verification that credits the card."""

    api: httpx.AsyncClient
    user_id: int
    card_id: int
    voucher_code: str
    redemption_id: str = ""
    code: str = ""

    async def start(self) -> httpx.Response:
        response = await self.api.post(
            "/api/v2/vouchers/redemptions",
            json={"VoucherCode": self.voucher_code, "UserId": self.user_id, "CardId": self.card_id},
            headers=idempotency_key("redemption"),
        )
        if response.status_code == 201:
            self.redemption_id = response.json()["Id"]
        return response

    async def sent_code(self) -> httpx.Response:
        response = await self.api.get(
            f"/api/v2/sandbox/vouchers/redemptions/{self.redemption_id}/code"
        )
        if response.status_code == 200:
            self.code = response.json()["Code"]
        return response

    async def verify(self) -> httpx.Response:
        return await self.api.post(
            f"/api/v2/vouchers/redemptions/{self.redemption_id}/verify",
            json={"Code": self.code},
            headers=idempotency_key("verify"),
        )


@dataclass
class Decision:
    """The card provider's real-time request, signed as `bench/api.py`'s `card_decision`
    signs it; each ask a new authorization."""

    api: httpx.AsyncClient
    company_id: int
    card_ref: str
    asked: int = 0

    async def ask(self) -> httpx.Response:
        self.asked += 1
        content = json.dumps(
            {
                "companyId": self.company_id,
                "authorizationId": f"counted-{self.asked}",
                "cardId": self.card_ref,
                "amountMinor": 150,
                "currency": "USD",
                "merchant": "Coffee Shop",
            }
        ).encode()
        return await self.api.post(
            "/providers/cardprov/authorizations",
            content=content,
            headers=inbound.signature_headers(PROVIDER_SECRET, content),
        )


async def provider_card_ref(app: FastAPI, card_id: int) -> str:
    async with app.state.session_factory() as session:
        found = await session.execute(select(Card.provider_card_id).where(Card.id == card_id))
        return str(found.scalar_one())


def app_on(url: str, runners: int) -> FastAPI:
    app: FastAPI = create_app(
        Settings(
            database_url=url,
            log_level="WARNING",
            rate_limit="1000000/second",
            run_background_jobs=False,
            provider_callback_secret=PROVIDER_SECRET,
            topup_batch_runners=runners,
        )
    )
    return app


async def cpu_per_request(request: Callable[[], Awaitable[httpx.Response]], repeat: int) -> float:
    """Process CPU µs per request over `repeat` requests sent one after another."""
    started = time.process_time()
    for _ in range(repeat):
        response = await request()
        if response.status_code >= 300:
            raise RuntimeError(f"{response.status_code} {response.text[:300]}")
    return (time.process_time() - started) / repeat * 1e6


async def measure(database: BenchDatabase, env: dict[str, str], show: bool, repeat: int) -> None:
    company = await create_company(env, "Statements")
    route_app = app_on(database.url, runners=0)
    lanes = {"route": route_app}
    if database.backend == "postgresql":
        lanes["lane"] = app_on(database.url, runners=1)
    clients = {
        name: httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://finplat.test",
            headers={"x-api-key": company.api_key},
            timeout=60,
        )
        for name, app in lanes.items()
    }
    api = clients["route"]
    try:
        await fund_master(api, 1_000_000)
        user_id = await approved_user(api, await tier_id(api), 1)
        card_type = await card_type_id(api, user_id)
        card_id = await active_card(api, user_id, card_type)
        serial = itertools.count(1_000)
        await top_up(api, card_id, 1000)  # the company's first top-up makes its fee account
        account_id = await open_bank_account(api, user_id)
        budget_id = await default_budget(api, user_id)
        savings_id = await open_budget(api, user_id, account_id, "Savings")
        await credit_budget(api, user_id, budget_id, 10_000)
        payee_id = await verified_payee(api, user_id)
        payout = Payout(api, user_id, account_id, budget_id, payee_id)
        decision = Decision(api, company.company_id, await provider_card_ref(route_app, card_id))
        trade = Trade(api, user_id, account_id)
        collecting = Collecting(api, user_id, await active_mandate(api, user_id, 100_000))
        await collecting.collect()  # the period's first collection grants its allowance
        [code] = await voucher_codes(api, 1, 100_000)
        redeeming = Redeeming(api, user_id, card_id, code)
        for client in clients.values():
            await client.get("/api/v2/tiers")  # the key is known to each app's process
        requests: list[tuple[str, str, Callable[[], Awaitable[httpx.Response]]]] = [
            ("get_user", "route", lambda: api.get(f"/api/v2/users/{user_id}")),
            ("list_cards", "route", lambda: api.get("/api/v2/cards", params={"userId": user_id})),
            (
                "get_balance",
                "route",
                lambda: api.get("/api/v2/banking/balance", params={"userId": user_id}),
            ),
            (
                "create_user",
                "route",
                lambda: api.post("/api/v2/users", json=user_body(next(serial))),
            ),
            (
                "order_card",
                "route",
                lambda: api.post(
                    "/api/v2/cards",
                    json={"UserId": user_id, "CardTypeId": card_type, "Phone": "+447911123456"},
                    headers=idempotency_key("order"),
                ),
            ),
            (
                "topup_lane_off",
                "route",
                lambda: api.post(
                    "/api/v2/cards/topup",
                    json={"CardId": card_id, "Token": "USD", "Value": 25.5},
                    headers=idempotency_key("topup"),
                ),
            ),
            (
                "unload",
                "route",
                lambda: api.post(
                    "/api/v2/cards/unload-card",
                    json={"CardId": card_id, "Currency": "USD", "Value": 5.25},
                    headers=idempotency_key("unload"),
                ),
            ),
            (
                "card_authorization",
                "route",
                lambda: api.post(
                    f"/api/v2/sandbox/cards/{card_id}/authorizations",
                    params={"userId": user_id},
                    json={"Amount": 2.5, "Currency": "USD", "Merchant": "Coffee Shop"},
                ),
            ),
            ("card_decision", "route", decision.ask),
            (
                "budget_transfer",
                "route",
                lambda: api.post(
                    f"/api/v2/banking/budgets/{budget_id}/transfer",
                    params={"userId": user_id},
                    json={
                        "AccountId": account_id,
                        "Amount": 1.5,
                        "Currency": "EUR",
                        "DestinationBudgetId": savings_id,
                    },
                    headers=idempotency_key("transfer"),
                ),
            ),
            ("payout_check", "route", payout.check),
            ("payout_initiate", "route", payout.initiate),
            ("payout_verify", "route", payout.verify),
            ("payout_create", "route", payout.create),
            ("fx_quote", "route", trade.quote),
            ("fx_trade", "route", trade.execute),
            ("payment_request", "route", collecting.request),
            ("payment_pay", "route", collecting.pay),
            ("collection", "route", collecting.collect),
            ("voucher_start", "route", redeeming.start),
            ("voucher_code", "route", redeeming.sent_code),
            ("voucher_verify", "route", redeeming.verify),
        ]
        if "lane" in clients:
            lane = clients["lane"]
            requests.insert(
                0,
                (
                    "topup",
                    "lane",
                    lambda: lane.post(
                        "/api/v2/cards/topup",
                        json={"CardId": card_id, "Token": "USD", "Value": 25.5},
                        headers=idempotency_key("topup"),
                    ),
                ),
            )
        counting = Counting(list(lanes.values()))
        for op, _where, request in requests:
            tally = await counting.count(request)
            line = tally.line(op, database.backend)
            if repeat and op not in SPENT_ONCE:
                line["cpu_us_per_request"] = round(await cpu_per_request(request, repeat))
            print(json.dumps(line), flush=True)
            if show:
                for text in tally.shown:
                    print(f"[{op}] {text}", file=sys.stderr)
    finally:
        for client in clients.values():
            await client.aclose()
        for app in lanes.values():
            await app.state.engine.dispose()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--postgres", nargs="?", const=PG_SERVER, metavar="URL", help="PostgreSQL (a server)"
    )
    parser.add_argument("--show", action="store_true", help="each statement on stderr")
    parser.add_argument(
        "--repeat", type=int, default=0, metavar="N", help="time N more requests of each"
    )
    args = parser.parse_args()
    database: BenchDatabase = PostgresDatabase(args.postgres) if args.postgres else SqliteDatabase()
    database.drop_abandoned()
    env = {**os.environ, "FINPLAT_DATABASE_URL": database.url, "FINPLAT_LOG_LEVEL": "WARNING"}
    database.create()
    ok = False
    try:
        subprocess.run([FINPLAT, "migrate"], env=env, cwd=ROOT, check=True, capture_output=True)  # noqa: S603
        asyncio.run(measure(database, env, args.show, args.repeat))
    finally:
        try:
            ok = verify_ledger(env)
        finally:
            database.drop()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
