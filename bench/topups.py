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
   and of the database's backends over its windows (`cpu_accounting`); the yardstick's line
   has `ceiling.sh`'s shape.
4. Stops the server, runs `finplat ledger verify` on the bench database, drops it.

Exit status 1 when the ledger does not verify or any top-up failed (the failures are counted in
the scenario's "errors" and a sample is printed on stderr).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import cpu_accounting
import httpx
import leftovers
import rounds
from cpu_accounting import CpuSample

ROOT = Path(__file__).resolve().parent.parent
FINPLAT = str(ROOT / ".venv" / "bin" / "finplat")
PG_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
TIER = "Personal Premium"
FUNDING_USD = 100_000_000  # per company, far more than a run tops up
SETUP_CONCURRENCY = 8
WARMUP_SECONDS = 2.0
CEILING = "sql-ceiling"  # the yardstick's scenario name, as `ceiling.sh` prints it


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ----------------------------------------------------------------------------- database/server


async def create_database(name: str) -> None:
    conn = await asyncpg.connect(PG_DSN)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()


async def drop_abandoned_databases() -> list[str]:
    """Drop the databases of benchmark runs that were killed before their cleanup."""
    conn = await asyncpg.connect(PG_DSN)
    try:
        rows = await conn.fetch(
            "SELECT datname FROM pg_database WHERE datname LIKE $1", leftovers.PREFIX + "%"
        )
    finally:
        await conn.close()
    gone = leftovers.abandoned(row["datname"] for row in rows)
    for name in gone:
        await drop_database(name)
    return gone


async def drop_database(name: str) -> None:
    conn = await asyncpg.connect(PG_DSN)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


async def analyze(name: str) -> None:
    conn = await asyncpg.connect(PG_DSN.rsplit("/", 1)[0] + f"/{name}")
    try:
        await conn.execute("ANALYZE")
    finally:
        await conn.close()


class Server:
    def __init__(self, env: dict[str, str], port: int, workers: int) -> None:
        self.env = env
        self.port = port
        self.workers = workers
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        cmd = [FINPLAT, "serve", "--port", str(self.port), "--workers", str(self.workers)]
        # Its own process group, so that stopping it also stops uvicorn's worker processes.
        self.proc = subprocess.Popen(cmd, env=self.env, cwd=ROOT, start_new_session=True)  # noqa: S603
        asyncio.run(self._wait_healthy(self.proc))

    async def _wait_healthy(self, proc: subprocess.Popen[bytes]) -> None:
        async with httpx.AsyncClient(base_url=self.base_url, timeout=2) as client:
            for _ in range(600):
                if proc.poll() is not None:
                    raise RuntimeError(f"finplat serve exited with {proc.returncode}")
                try:
                    if (await client.get("/healthz")).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.1)
        raise RuntimeError("finplat serve did not become healthy within 60 s")

    def cpu_watch(self, database: str) -> Callable[[], CpuSample | None]:
        """Samples of the CPU used by the server's processes and `database`'s backends."""
        assert self.proc is not None
        group = self.proc.pid  # its own session: the group of its workers too
        return lambda: cpu_accounting.sample(group, database, time.monotonic())

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


# ----------------------------------------------------------------------------------- setup


@dataclass
class Company:
    company_id: int
    api_key: str
    cards: list[int] = field(default_factory=list)


def expect(response: httpx.Response, status: int) -> Any:
    if response.status_code != status:
        raise RuntimeError(
            f"{response.request.method} {response.request.url.path}: "
            f"{response.status_code} {response.text[:500]}"
        )
    return response.json() if response.content else None


async def create_company(env: dict[str, str], name: str) -> Company:
    proc = await asyncio.create_subprocess_exec(
        FINPLAT, "company", "create", "--name", name, "--json",
        env=env, cwd=ROOT, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, _ = await proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"finplat company create exited with {proc.returncode}")
    data = json.loads(out.decode().strip().splitlines()[-1])
    return Company(int(data["CompanyId"]), str(data["ApiKey"]))


async def card_type_id(api: httpx.AsyncClient, user_id: int) -> int:
    tier_id = expect(await api.get(f"/api/v2/users/{user_id}"), 200)["TierId"]
    products = expect(await api.get(f"/api/v2/tiers/card-tier/{tier_id}"), 200)["CardProducts"]
    return int(
        next(
            p["CardTypeId"]
            for p in products
            if p["Provider"] == "cardprov" and p["CardType"] == "VIRTUAL"
        )
    )


async def approved_user(api: httpx.AsyncClient, tier_id: int, n: int) -> int:
    body = {
        "Email": f"bench{n}@example.com",
        "FirstName": "Ada",
        "LastName": "Lovelace",
        "Phone": "+447911123456",
        "ExternalUserId": f"bench_{n}",
        "AccountType": "personal",
        "DateOfBirth": "1990-05-17",
        "Address": "12 Analytical Row",
        "City": "London",
        "Country": "GB",
        "ZipCode": "N1 9GU",
    }
    user_id = int(expect(await api.post("/api/v2/users", json=body), 201)["Id"])
    expect(await api.post(f"/api/v2/users/{user_id}/sumsub/kyc-url", json={}), 200)
    complete = f"/api/v2/sandbox/users/{user_id}/kyc/complete"
    expect(await api.post(complete, json={"Outcome": "APPROVED"}), 200)
    expect(await api.post(f"/api/v2/users/{user_id}/tier", json={"TierId": tier_id}), 200)
    return user_id


async def active_card(api: httpx.AsyncClient, user_id: int, type_id: int) -> int:
    body = {"UserId": user_id, "CardTypeId": type_id, "Phone": "+447911123456"}
    headers = {"Idempotency-Key": f"bench-order-{secrets.token_hex(8)}"}
    card = expect(await api.post("/api/v2/cards", json=body, headers=headers), 201)
    path = f"/api/v2/sandbox/cards/{card['Id']}/callbacks"
    expect(await api.post(path, params={"userId": user_id}), 204)
    detail = expect(await api.get(f"/api/v2/cards/{card['Id']}", params={"userId": user_id}), 200)
    if detail["Status"] != "ACTIVE":
        raise RuntimeError(f"card {card['Id']} is {detail['Status']} after production")
    return int(card["Id"])


async def set_up_company(
    base_url: str, env: dict[str, str], name: str, n_cards: int, gate: asyncio.Semaphore
) -> Company:
    async with gate:
        company = await create_company(env, name)
    headers = {"x-api-key": company.api_key}
    async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=60) as api:
        funding = {"Currency": "USD", "Amount": FUNDING_USD}
        key = {"Idempotency-Key": f"bench-fund-{secrets.token_hex(8)}"}
        expect(await api.post("/api/v2/sandbox/company/funding", json=funding, headers=key), 200)
        tiers = expect(await api.get("/api/v2/tiers"), 200)["Tiers"]
        tier_id = next(t["Id"] for t in tiers if t["Name"] == TIER)

        async def one(i: int) -> int:
            async with gate:
                user_id = await approved_user(api, tier_id, company.company_id * 100_000 + i)
                return await active_card(api, user_id, await card_type_id(api, user_id))

        company.cards = list(await asyncio.gather(*(one(i) for i in range(n_cards))))
    return company


# ------------------------------------------------------------------------------- load


@dataclass
class LoadSpec:
    port: int
    targets: list[tuple[str, int]]  # (api key, card id)
    clients: int
    first_client: int
    total_clients: int
    start_at: float  # time.time() when measuring starts (after the warm-up)
    stop_at: float
    tag: str


@dataclass
class LoadResult:
    latencies: list[float] = field(default_factory=list)  # seconds, measured window only
    errors: Counter[int] = field(default_factory=Counter)
    samples: list[str] = field(default_factory=list)
    first: float = float("inf")
    last: float = 0.0


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    length = None
    chunked = False
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value)
        elif name == "transfer-encoding" and "chunked" in value.lower():
            chunked = True
    if chunked:
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            chunk = await reader.readexactly(size + 2)
            if size == 0:
                break
            body += chunk[:-2]
        return status, body
    return status, await reader.readexactly(length or 0)


async def client(spec: LoadSpec, index: int, result: LoadResult) -> None:
    rng = random.Random(index)  # noqa: S311 (amounts and card choice)
    # Each connection tops up its own cards when there are enough: concurrent top-ups of one
    # card are rare in real traffic (and they serialize on the card's row anyway).
    total = spec.total_clients
    mine = spec.targets[index % len(spec.targets) :: total] or spec.targets
    reader, writer = await asyncio.open_connection("127.0.0.1", spec.port)
    host = f"127.0.0.1:{spec.port}"
    seq = 0
    try:
        while True:
            began = time.time()
            if began >= spec.stop_at:
                return
            api_key, card_id = mine[rng.randrange(len(mine))]
            cents = rng.randrange(500, 20_000)  # 5.00 .. 199.99 USD
            body = json.dumps(
                {"CardId": card_id, "Token": "USD", "Value": cents / 100}, separators=(",", ":")
            ).encode()
            seq += 1
            key = f"bench-{spec.tag}-{index}-{seq}"
            request = (
                f"POST /api/v2/cards/topup HTTP/1.1\r\nHost: {host}\r\n"
                f"x-api-key: {api_key}\r\nIdempotency-Key: {key}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            ).encode() + body
            writer.write(request)
            status, payload = await read_response(reader)
            done = time.time()
            if began < spec.start_at:
                continue  # warm-up
            result.first = min(result.first, began)
            result.last = max(result.last, done)
            if status == 200:
                result.latencies.append(done - began)
            else:
                result.errors[status] += 1
                if len(result.samples) < 5:
                    result.samples.append(f"{status} {payload[:300].decode(errors='replace')}")
    finally:
        writer.close()


async def run_clients(spec: LoadSpec) -> LoadResult:
    result = LoadResult()
    await asyncio.gather(
        *(client(spec, spec.first_client + i, result) for i in range(spec.clients))
    )
    return result


def load_process(spec: LoadSpec) -> LoadResult:
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    return asyncio.run(run_clients(spec))


def sample_at(when: float, watch: Callable[[], CpuSample | None]) -> CpuSample | None:
    time.sleep(max(0.0, when - time.time()))
    return watch()


@dataclass
class Slice:
    """One measured slice of a scenario."""

    latencies: list[float]  # seconds, of the successful top-ups
    errors: Counter[int]
    window_seconds: float
    cpu: tuple[CpuSample | None, CpuSample | None]  # at its start and at its end


def drive(
    port: int,
    targets: list[tuple[str, int]],
    clients: int,
    procs: int,
    seconds: float,
    tag: str,
    watch: Callable[[], CpuSample | None] = lambda: None,
) -> Slice:
    """Top-ups from `clients` connections for `seconds` after a warm-up; `tag` makes the
    slice's idempotency keys its own."""
    start_at = time.time() + 1.0 + WARMUP_SECONDS  # 1 s for the load processes to start
    stop_at = start_at + seconds
    per = [clients // procs + (1 if i < clients % procs else 0) for i in range(procs)]
    specs = []
    first = 0
    for n in per:
        specs.append(LoadSpec(port, targets, n, first, clients, start_at, stop_at, tag))
        first += n
    with ProcessPoolExecutor(max_workers=procs) as pool:
        running = [pool.submit(load_process, spec) for spec in specs]
        cpu_before = sample_at(start_at, watch)
        cpu_after = sample_at(stop_at, watch)
        results = [job.result() for job in running]
    errors: Counter[int] = Counter()
    for r in results:
        errors.update(r.errors)
    for sample in [s for r in results for s in r.samples][:5]:
        log(f"{tag}: failed top-up: {sample}")
    window = max(r.last for r in results) - min(r.first for r in results)
    return Slice(
        latencies=[x for r in results for x in r.latencies],
        errors=errors,
        window_seconds=max(0.0, window),
        cpu=(cpu_before, cpu_after),
    )


def summary(
    scenario: str, slices: list[Slice], clients: int, targets: list[tuple[str, int]]
) -> dict[str, Any]:
    """The scenario's JSON line: its slices taken together as one window."""
    combined = rounds.Slices()
    errors: Counter[int] = Counter()
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
        "error_statuses": {str(k): v for k, v in sorted(errors.items())},
        "clients": clients,
        "seconds": round(combined.window_seconds, 1),
        "rounds": len(slices),
        "cards": len(targets),
        "companies": len({k for k, _ in targets}),
        **cpu_accounting.per_top_up([one.cpu for one in slices], combined.ok),
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


def verify_ledger(env: dict[str, str]) -> bool:
    done = subprocess.run(  # noqa: S603
        [FINPLAT, "ledger", "verify"], env=env, cwd=ROOT, capture_output=True, text=True
    )
    for line in (done.stdout + done.stderr).strip().splitlines():
        log(f"ledger verify: {line}")
    return done.returncode == 0


async def set_up(
    server: Server, env: dict[str, str], companies: int, cards_per_company: int, hot_cards: int
) -> tuple[list[Company], Company]:
    gate = asyncio.Semaphore(SETUP_CONCURRENCY)
    jobs = [
        set_up_company(server.base_url, env, f"Bench spread {i}", cards_per_company, gate)
        for i in range(companies)
    ]
    jobs.append(set_up_company(server.base_url, env, "Bench hot", hot_cards, gate))
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
        help="py-spy record the server during the last slice of `hot`: flame graph (.svg) or "
        "collapsed stacks (.txt)",
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

    dropped = asyncio.run(drop_abandoned_databases())
    if dropped:
        log(f"dropped {len(dropped)} database(s) of killed runs: {', '.join(dropped)}")
    name = leftovers.database_name()
    env = {
        **os.environ,
        "FINPLAT_DATABASE_URL": f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}",
        "FINPLAT_RATE_LIMIT": "1000000/second",
        "FINPLAT_LOG_LEVEL": "WARNING",
    }
    asyncio.run(create_database(name))
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
            asyncio.run(analyze(name))
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
            profiler = None
            # The last round's: the first one's opens with the server's own warm-up (the first
            # top-ups of a company go the route's way and make its fee revenue account).
            last_round = round_no == args.rounds - 1
            if scenario == "hot" and last_round and args.profile and server.proc is not None:
                spy = str(ROOT / ".venv" / "bin" / "py-spy")
                duration = str(int(slice_seconds + WARMUP_SECONDS))
                profiler = subprocess.Popen(  # noqa: S603
                    [spy, "record", "--subprocesses", "--pid", str(server.proc.pid),
                     "--duration", duration, "--rate", "200", "-o", args.profile,
                     "--format", "raw" if args.profile.endswith(".txt") else "flamegraph"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )  # fmt: skip
            one = drive(
                server.port,
                plans[scenario],
                args.clients,
                args.procs,
                slice_seconds,
                f"{scenario}-{round_no}",
                watch=server.cpu_watch(name),
            )
            measured[scenario].append(one)
            rate = len(one.latencies) / one.window_seconds if one.window_seconds else 0.0
            log(f"{where}: {rate:.1f}/s")
            failed = failed or sum(one.errors.values()) > 0
            if profiler is not None:
                profiler.wait(timeout=120)
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
            asyncio.run(drop_database(name))
    if not ledger_ok:
        log("finplat ledger verify FAILED on the bench database")
    if failed:
        log("some top-ups failed (see the scenario's error_statuses)")
    return 0 if ledger_ok and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
