"""The whole-API benchmark (issue 31): every operation on the ordinary request path, each alone
for a fixed time, against a real `finplat serve` driven over HTTP.

Usage: bench/api.py [--seconds S] [--clients C] [--ops a,b] [--sqlite] [--procs P]
                    [--users U] [--profile FILE]

1. Drops what killed runs left behind (`leftovers`), creates a fresh database (PostgreSQL:
   `finplat_bench_<pid>_<random>` on 127.0.0.1:5432, or `--postgres`; `--sqlite`: the embedded
   default, `var/finplat_bench_<pid>_<random>.db`) and starts `finplat serve` on it (one
   process; rate limit lifted, logs at WARNING, the five-minute reconciliation moved out of
   the run).
2. Sets up through the public API and the sandbox, untimed: a company (`finplat company
   create`) with its master and voucher funding accounts funded, and U users (default 2 x C),
   each KYC-approved with an active virtual card topped up, an open bank account whose default
   budget is funded, a second budget, a verified payee, an active mandate on the budget, a
   voucher of their own and a funded USDC pay-in address.
3. Runs each operation alone (`api_operations`; in that order, whatever the order of `--ops`)
   for S seconds after a warm-up, from C keep-alive HTTP/1.1 connections spread over P load
   processes (`load`), each connection on its own users. `topup_lane_off` runs last, on a
   server started again with `FINPLAT_TOPUP_BATCH_RUNNERS=0` (the batched lane is PostgreSQL's
   only: on SQLite both top-up lines measure the route). Prints one JSON line per operation:
   {"op", "ops_per_s", "p50_ms", "p99_ms", "server_cpu_us_per_op", "db_cpu_us_per_op",
   "errors", ...}: CPU of the server's processes and of the bench database's PostgreSQL
   backends over the window (`cpu_accounting`; null on SQLite, where the database works in
   the server's process and its CPU is the server's), and `load_cpu_pct`, the busiest load
   process's CPU: `generator_bound` (and a line on stderr) when it nears a whole core, the
   figure then being the generator's limit rather than the server's. `others_busy_pct` is the
   share of the machine's cores that other work took over the window (a shared machine's
   noise).
4. Stops the server, runs `finplat ledger verify` on the database and drops it.

Exit status 1 when any operation failed (each failure counted in its line's "errors" by step
and status, a sample printed on stderr) or the ledger does not verify.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from dataclasses import replace
from itertools import chain, zip_longest
from typing import Any

import cpu_accounting
import httpx
import profiling
import rounds
from api_operations import (
    LANE_OFF,
    OPERATIONS,
    PROVIDER_SECRET,
    REQUESTS_PER_OPERATION,
    Customer,
)
from load import WARMUP_SECONDS, Slice, drive, log
from partner_setup import (
    SETUP_CONCURRENCY,
    active_card,
    active_mandate,
    approved_user,
    card_type_id,
    create_company,
    credit_budget,
    default_budget,
    fund_master,
    funded_payin_address,
    open_bank_account,
    open_budget,
    tier_id,
    top_up,
    verified_payee,
    voucher_codes,
)
from run_database import PG_SERVER, BenchDatabase, PostgresDatabase, SqliteDatabase, verify_ledger
from server import Server, free_port
from sqlalchemy import select

from finplat.cards.models import Card
from finplat.config import Settings
from finplat.db.engine import create_engine

FUNDING_USD = 100_000_000  # the master account's, far more than a run moves
CARD_FUNDING_USD = 100_000  # each card's, far more than a run unloads and spends
BUDGET_FUNDING_EUR = 1_000_000  # each funded budget's, far more than a run pays out
VOUCHER_FUNDING_USD = 10_000_000  # the company's voucher funding, far more than a run redeems
CRYPTO_FUNDING_USDC = 9_000  # each crypto balance's, far more than a run loads (no EDD)
MANDATE_ALLOWANCE_EUR = 100_000  # each mandate's per month, far more than a run collects
RECONCILE_INTERVAL_SECONDS = 86_400  # background work outside the request path: not in a window


# ----------------------------------------------------------------------------------- setup


async def customer(
    api: httpx.AsyncClient, api_key: str, company_id: int, tier: int, n: int
) -> Customer:
    user_id = await approved_user(api, tier, n)
    type_id = await card_type_id(api, user_id)
    card_id = await active_card(api, user_id, type_id)
    await top_up(api, card_id, CARD_FUNDING_USD)
    account_id = await open_bank_account(api, user_id)
    budget_id = await default_budget(api, user_id)
    savings_id = await open_budget(api, user_id, account_id, "Savings")
    await credit_budget(api, user_id, budget_id, BUDGET_FUNDING_EUR)
    payee_id = await verified_payee(api, user_id)
    mandate_id = await active_mandate(api, user_id, MANDATE_ALLOWANCE_EUR)
    address = await funded_payin_address(api, user_id, CRYPTO_FUNDING_USDC)
    return Customer(
        api_key,
        user_id,
        type_id,
        card_id,
        account_id,
        budget_id,
        savings_id,
        payee_id,
        company_id,
        mandate_id=mandate_id,
        payin_address=address,
    )


async def with_card_refs(database_url: str, customers: list[Customer]) -> list[Customer]:
    """The customers with their card's id at the card provider, which no API answer shows (a
    provider's id is the provider's business): read from the database, as the provider
    would know it."""
    engine = create_engine(Settings(database_url=database_url))
    try:
        async with engine.connect() as connection:
            found = await connection.execute(select(Card.id, Card.provider_card_id))
            refs = {card_id: ref for card_id, ref in found}
    finally:
        await engine.dispose()
    return [replace(c, card_ref=str(refs[c.card_id])) for c in customers]


async def company_customers(
    base_url: str, env: dict[str, str], name: str, users: int, gate: asyncio.Semaphore
) -> list[Customer]:
    async with gate:
        company = await create_company(env, name)
    headers = {"x-api-key": company.api_key}
    async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=60) as api:
        await fund_master(api, FUNDING_USD)
        tier = await tier_id(api)

        async def one(i: int) -> Customer:
            async with gate:
                n = company.company_id * 100_000 + i
                return await customer(api, company.api_key, company.company_id, tier, n)

        made = list(await asyncio.gather(*(one(i) for i in range(users))))
        codes = await voucher_codes(api, len(made), VOUCHER_FUNDING_USD)
        return [replace(c, voucher_code=code) for c, code in zip(made, codes, strict=True)]


async def set_up(base_url: str, env: dict[str, str], companies: int, users: int) -> list[Customer]:
    """`users` customers spread over `companies`, taken in turn from each company."""
    gate = asyncio.Semaphore(SETUP_CONCURRENCY)
    per = [users // companies + (1 if i < users % companies else 0) for i in range(companies)]
    made = await asyncio.gather(
        *(
            company_customers(base_url, env, f"Bench company {i}", n, gate)
            for i, n in enumerate(per)
        )
    )
    return [c for c in chain.from_iterable(zip_longest(*made)) if c is not None]


# --------------------------------------------------------------------------------- figures


def summary(op: str, one: Slice, clients: int, database: BenchDatabase) -> dict[str, Any]:
    """The operation's JSON line."""
    combined = rounds.Slices()
    combined.add(one.latencies, one.window_seconds)
    cpu = cpu_accounting.per_operation([one.cpu], combined.ok)
    embedded = database.backend == "sqlite"
    return {
        "op": op,
        "ops_per_s": round(combined.ops_per_s, 1),
        "p50_ms": round(combined.percentile_ms(0.50), 1),
        "p99_ms": round(combined.percentile_ms(0.99), 1),
        "server_cpu_us_per_op": cpu.get("server_cpu_us_per_op"),
        "db_cpu_us_per_op": None if embedded else cpu.get("postgres_cpu_us_per_op"),
        "errors": sum(one.errors.values()),
        "error_kinds": dict(sorted(one.errors.items())),
        "ok": combined.ok,
        "requests_per_op": REQUESTS_PER_OPERATION.get(op, 1),
        "database": database.backend,
        "clients": clients,
        "seconds": round(combined.window_seconds, 1),
        "machine_busy_pct": cpu.get("machine_busy_pct"),
        "others_busy_pct": cpu_accounting.busy_elsewhere_pct([one.cpu], one.generator_seconds),
        "load_cpu_pct": round(100 * one.generator_share, 1),
        "generator_bound": one.generator_bound,
    }


# ------------------------------------------------------------------------------------ main


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="measured seconds per op")
    parser.add_argument("--clients", type=int, default=32, help="concurrent HTTP connections")
    parser.add_argument(
        "--ops", default=",".join(OPERATIONS), help=f"comma-separated, of: {', '.join(OPERATIONS)}"
    )
    parser.add_argument("--sqlite", action="store_true", help="the embedded SQLite database")
    parser.add_argument("--procs", type=int, default=2, help="load-generator processes")
    parser.add_argument("--users", type=int, help="users set up (default: 2 x clients)")
    parser.add_argument("--companies", type=int, default=1, help="companies the users are in")
    parser.add_argument(
        "--postgres", default=PG_SERVER, metavar="URL", help="the PostgreSQL server (any database)"
    )
    parser.add_argument(
        "--profile",
        metavar="FILE",
        help="py-spy record the server over the measured window of the one op in --ops: flame "
        "graph (.svg), collapsed stacks (.txt) or speedscope (.json)",
    )
    parser.add_argument(
        "--profile-native", action="store_true", help="with --profile: C frames too (slower)"
    )
    args = parser.parse_args(argv)
    if min(args.clients, args.procs, args.companies) < 1 or args.seconds <= 0:
        parser.error("--clients, --procs, --companies and --seconds must be positive")
    args.users = args.users or max(4, 2 * args.clients)
    if args.users < args.companies:
        parser.error("--users must be at least --companies")
    asked = [op for op in args.ops.split(",") if op]
    unknown = sorted(set(asked) - set(OPERATIONS))
    if unknown or not asked:
        parser.error(f"unknown operations: {', '.join(unknown)}" if unknown else "no --ops")
    args.ops = [op for op in OPERATIONS if op in asked]
    if args.profile and len(args.ops) != 1:
        parser.error("--profile needs exactly one operation in --ops")
    return args


def main() -> int:
    args = parse()
    database: BenchDatabase = SqliteDatabase() if args.sqlite else PostgresDatabase(args.postgres)
    dropped = database.drop_abandoned()
    if dropped:
        log(f"dropped {len(dropped)} database(s) of killed runs: {', '.join(dropped)}")
    env = {
        **os.environ,
        "FINPLAT_DATABASE_URL": database.url,
        "FINPLAT_RATE_LIMIT": "1000000/second",
        "FINPLAT_LOG_LEVEL": "WARNING",
        "FINPLAT_RECONCILE_INTERVAL_SECONDS": str(RECONCILE_INTERVAL_SECONDS),
        "FINPLAT_PROVIDER_CALLBACK_SECRET": PROVIDER_SECRET,
    }
    warmup = min(WARMUP_SECONDS, args.seconds / 4)
    database.create()
    server = Server(env, free_port())
    failed = False
    ledger_ok = False
    try:
        server.start()
        log(f"finplat serve (pid {server.pid}) on {database.backend} database {database.name}")
        started = time.monotonic()
        customers = asyncio.run(set_up(server.base_url, env, args.companies, args.users))
        customers = asyncio.run(with_card_refs(database.url, customers))
        took = time.monotonic() - started
        log(f"setup: {len(customers)} users in {args.companies} company(ies) in {took:.0f} s")
        for op in args.ops:
            if op == LANE_OFF:
                server.stop()
                server = Server({**env, "FINPLAT_TOPUP_BATCH_RUNNERS": "0"}, free_port())
                server.start()
                log(f"finplat serve (pid {server.pid}) without the batched top-up lane")
            profiler = profiling.Profiler(
                server.pid, args.seconds, args.profile, native=args.profile_native
            )
            one = drive(
                server.port,
                OPERATIONS[op],
                customers,
                args.clients,
                args.procs,
                args.seconds,
                op,
                watch=server.cpu_watch(database.cpu_name),
                warmup=warmup,
                at_start=profiler.start,
            )
            profiler.wait()
            line = summary(op, one, args.clients, database)
            print(json.dumps(line), flush=True)
            failed = failed or line["errors"] > 0
            if one.generator_bound:
                log(
                    f"{op}: a load process used {line['load_cpu_pct']} % of a core: the load "
                    "generator may be the limit here (more --procs, or a machine with cores "
                    "to spare)"
                )
    finally:
        server.stop()
        try:
            ledger_ok = verify_ledger(env)
        finally:
            database.drop()
    if not ledger_ok:
        log("finplat ledger verify FAILED on the bench database")
    if failed:
        log("some operations failed (see each line's error_kinds and the samples above)")
    return 0 if ledger_ok and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
