"""Card top-up benchmark: a real `finplat serve` on a fresh PostgreSQL database, driven over HTTP.

Usage: bench/topups.py [--seconds S] [--clients C] [--workers W] [--procs P] [--rounds R]
                       [--ceiling ceiling.sh]

1. Drops the databases of earlier runs that were killed before their cleanup (`leftovers`),
   creates `finplat_bench_<pid>_<random>` on 127.0.0.1:5432 (user postgres) and starts
   `.venv/bin/finplat serve` against it (rate limit lifted, logs at WARNING).
2. Sets up through the public API and the sandbox, like a client would: companies
   (`finplat company create --json`), their master accounts funded through
   `POST /api/v2/sandbox/company/funding`, KYC-approved users, and active virtual cards.
3. Drives `POST /api/v2/cards/topup` with a unique Idempotency-Key per request from C
   concurrent keep-alive HTTP/1.1 connections (raw asyncio, P load processes) for S seconds
   per scenario, in two scenarios:
     spread: many companies, each with its own master account, cards spread over them;
     hot:    one company, so every top-up debits the same master account.
   With `--ceiling`, the pgbench yardstick too, as a third scenario (`sql-ceiling`). Each
   scenario's S seconds are cut into R slices (each after a short warm-up) run in rounds
   whose order reverses every round, so that the machine's drift falls on every scenario
   alike (`rounds`). Prints one JSON line per scenario, its slices taken together:
   {"scenario", "ops_per_s", "p50_ms", "p99_ms", ...}, with the CPU per top-up of the server
   and of the database's backends over its windows (`cpu_accounting`) and whether a load
   process neared a whole core (`generator_bound`: then the figure is the generator's limit);
   the yardstick's line has `ceiling.sh`'s shape.
4. Stops the server, runs `finplat ledger verify` on the bench database, drops it.

Exit status 1 when the ledger does not verify or any top-up failed (the failures are counted in
the scenario's "errors" and a sample is printed on stderr).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections import Counter
from typing import Any

import cpu_accounting
import profiling
import rounds
from http1 import Connection
from load import Client, Failure, Slice, drive, expect, log
from partner_setup import SETUP_CONCURRENCY, Company, set_up_company
from run_database import PostgresDatabase, verify_ledger
from server import Server, free_port

FUNDING_USD = 100_000_000  # per company, far more than a run tops up
CEILING = "sql-ceiling"  # the yardstick's scenario name, as `ceiling.sh` prints it


# ------------------------------------------------------------------------------- load


async def topup(conn: Connection, target: tuple[str, int], client: Client) -> Failure | None:
    """One top-up of 5.00 to 199.99 USD under a key of its own."""
    api_key, card_id = target
    cents = client.rng.randrange(500, 20_000)
    failure, _ = await expect(
        conn,
        200,
        "POST",
        "/api/v2/cards/topup",
        api_key=api_key,
        body={"CardId": card_id, "Token": "USD", "Value": cents / 100},
        idempotency_key=client.next_key(),
    )
    return failure


def summary(
    scenario: str, slices: list[Slice], clients: int, targets: list[tuple[str, int]]
) -> dict[str, Any]:
    """The scenario's JSON line: its slices taken together as one window."""
    combined = rounds.Slices()
    errors: Counter[str] = Counter()
    for one in slices:
        combined.add(one.latencies, one.window_seconds)
        errors.update(one.errors)
    return {
        "scenario": scenario,
        "ops_per_s": round(combined.ops_per_s, 1),
        "p50_ms": round(combined.percentile_ms(0.50), 1),
        "p99_ms": round(combined.percentile_ms(0.99), 1),
        "ok": combined.ok,
        "errors": sum(errors.values()),
        "error_statuses": dict(sorted(errors.items())),
        "clients": clients,
        "seconds": round(combined.window_seconds, 1),
        "rounds": len(slices),
        "cards": len(targets),
        "companies": len({k for k, _ in targets}),
        **cpu_accounting.per_operation([one.cpu for one in slices], combined.ok),
        "generator_bound": any(one.generator_bound for one in slices),
    }


def run_ceiling(script: str, seconds: int, clients: int) -> dict[str, Any]:
    """One slice of the pgbench yardstick (`ceiling.sh SECONDS CLIENTS`): its JSON line."""
    done = subprocess.run(  # noqa: S603
        [script, str(seconds), str(clients)], capture_output=True, text=True, check=False
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{script} failed ({done.returncode}): {done.stderr.strip()[-300:]}")
    figures: dict[str, Any] = json.loads(lines[-1])
    return figures


def ceiling_summary(slices: list[dict[str, Any]], clients: int) -> dict[str, Any]:
    """The yardstick's slices as one line of `ceiling.sh`'s shape."""
    timed = [(float(s["ops_per_s"]), float(s["seconds"])) for s in slices]
    latency = [(float(s["avg_ms"]), float(s["seconds"])) for s in slices]
    return {
        "scenario": CEILING,
        "ops_per_s": round(rounds.time_weighted_mean(timed), 1),
        "avg_ms": round(rounds.time_weighted_mean(latency), 3),
        "clients": clients,
        "seconds": sum(length for _, length in timed),
        "rounds": len(slices),
    }


# ---------------------------------------------------------------------------------- main


async def set_up(
    server: Server, env: dict[str, str], companies: int, cards_per_company: int, hot_cards: int
) -> tuple[list[Company], Company]:
    gate = asyncio.Semaphore(SETUP_CONCURRENCY)
    jobs = [
        set_up_company(
            server.base_url, env, f"Bench spread {i}", cards_per_company, gate, FUNDING_USD
        )
        for i in range(companies)
    ]
    jobs.append(set_up_company(server.base_url, env, "Bench hot", hot_cards, gate, FUNDING_USD))
    made = await asyncio.gather(*jobs)
    return list(made[:-1]), made[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="measured seconds per scenario")
    parser.add_argument("--clients", type=int, default=32, help="concurrent HTTP connections")
    parser.add_argument("--workers", type=int, default=1, help="`finplat serve --workers`")
    parser.add_argument("--procs", type=int, default=1, help="load-generator processes")
    parser.add_argument("--companies", type=int, default=16, help="companies in `spread`")
    parser.add_argument("--cards", type=int, default=64, help="cards per scenario")
    parser.add_argument(
        "--profile",
        metavar="FILE",
        help="py-spy record the server during the last slice of `hot`: flame graph (.svg), "
        "collapsed stacks (.txt) or speedscope (.json)",
    )
    parser.add_argument(
        "--analyze",
        action="store_true",
        help="ANALYZE the bench database after the setup (see docs/performance.md)",
    )
    parser.add_argument(
        "--scenarios", default="spread,hot", help="comma-separated: spread, hot (in that order)"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=4,
        help="slices per scenario, in rounds of alternating order (even; see bench/rounds.py)",
    )
    parser.add_argument(
        "--ceiling",
        metavar="SCRIPT",
        help="also run this pgbench yardstick (ceiling.sh) in the same rounds, as sql-ceiling",
    )
    parser.add_argument(
        "--ceiling-clients", type=int, default=16, help="clients of the yardstick's pgbench"
    )
    args = parser.parse_args()
    if args.clients < 1 or args.procs < 1 or args.seconds <= 0 or args.ceiling_clients < 1:
        parser.error("--clients, --ceiling-clients, --procs and --seconds must be positive")
    if args.rounds < 2 or args.rounds % 2:
        parser.error("--rounds must be an even number, 2 or more")
    scenarios = [s for s in args.scenarios.split(",") if s]
    unknown = set(scenarios) - {"spread", "hot"}
    if unknown:
        parser.error(f"unknown scenarios: {', '.join(sorted(unknown))}")
    slice_seconds = args.seconds / args.rounds

    database = PostgresDatabase()
    dropped = database.drop_abandoned()
    if dropped:
        log(f"dropped {len(dropped)} database(s) of killed runs: {', '.join(dropped)}")
    env = {
        **os.environ,
        "FINPLAT_DATABASE_URL": database.url,
        "FINPLAT_RATE_LIMIT": "1000000/second",
        "FINPLAT_LOG_LEVEL": "WARNING",
    }
    database.create()
    server = Server(env, free_port(), args.workers)
    failed = False
    ledger_ok = False
    try:
        server.start()
        per_company = max(1, args.cards // args.companies)
        started = time.monotonic()
        spread, hot = asyncio.run(set_up(server, env, args.companies, per_company, args.cards))
        if args.analyze:
            # A live database has planner statistics; a fresh one has none until autovacuum
            # gets to it, and plans chosen on empty statistics can scan a whole company's rows.
            database.analyze()
        took = time.monotonic() - started
        log(f"setup: {args.companies + 1} companies and their cards ready in {took:.0f} s")
        plans = {
            "spread": [(c.api_key, card) for c in spread for card in c.cards],
            "hot": [(hot.api_key, card) for card in hot.cards],
        }
        measured: dict[str, list[Slice]] = {scenario: [] for scenario in scenarios}
        yardstick: list[dict[str, Any]] = []
        order = scenarios + ([CEILING] if args.ceiling else [])
        for round_no, scenario in rounds.schedule(order, args.rounds):
            where = f"round {round_no + 1}/{args.rounds} {scenario}"
            if scenario == CEILING:
                # pgbench takes whole seconds.
                figures = run_ceiling(
                    args.ceiling, max(1, round(slice_seconds)), args.ceiling_clients
                )
                yardstick.append(figures)
                log(f"{where}: {float(figures['ops_per_s']):.1f}/s")
                continue
            # The last round's: the first one's opens with the server's own warm-up (the first
            # top-ups of a company go the route's way and make its fee revenue account).
            last_round = round_no == args.rounds - 1
            profiler = profiling.Profiler(
                server.pid,
                slice_seconds,
                args.profile if scenario == "hot" and last_round else None,
            )
            one = drive(
                server.port,
                topup,
                plans[scenario],
                args.clients,
                args.procs,
                slice_seconds,
                f"{scenario}-{round_no}",
                watch=server.cpu_watch(database.name),
                at_start=profiler.start,
            )
            measured[scenario].append(one)
            rate = len(one.latencies) / one.window_seconds if one.window_seconds else 0.0
            log(f"{where}: {rate:.1f}/s")
            failed = failed or sum(one.errors.values()) > 0
            profiler.wait()
        for scenario in scenarios:
            line = summary(scenario, measured[scenario], args.clients, plans[scenario])
            print(json.dumps(line), flush=True)
        if yardstick:
            print(json.dumps(ceiling_summary(yardstick, args.ceiling_clients)), flush=True)
    finally:
        server.stop()
        try:
            ledger_ok = verify_ledger(env)
        finally:
            database.drop()
    if not ledger_ok:
        log("finplat ledger verify FAILED on the bench database")
    if failed:
        log("some top-ups failed (see the scenario's error_statuses)")
    return 0 if ledger_ok and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
