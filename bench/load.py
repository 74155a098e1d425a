"""The load generator: C concurrent keep-alive connections (`http1`) spread over P processes,
each repeating one operation for a measured window after a warm-up.

An operation is an async function `(connection, target, client) -> Failure | None` defined at
a module's top level (the load processes are forked and find it by reference); it may send
several requests, and is timed as a whole. Each connection works on its own share of the
targets when there are enough of them: concurrent requests on one card or budget are rare in
real traffic (and they serialize on its row anyway).

Whether the generator kept up is measured too: each load process's CPU over the window. A
process near a whole core is the limit, not the server; `Slice.generator_bound` says so.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from cpu_accounting import CpuSample
from http1 import Connection

LEAD_SECONDS = 0.5  # for the load processes to start before the warm-up
WARMUP_SECONDS = 2.0
REQUEST_TIMEOUT_SECONDS = 60.0
# A load process using this share of a core or more is taken to be the limit.
GENERATOR_BOUND_SHARE = 0.85
SAMPLES = 5  # failures printed per slice


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Failure:
    """An operation that did not get the answer it expects: at which step, the status (0 for
    a broken connection or a timeout) and the start of the body."""

    step: str
    status: int
    detail: str

    @property
    def kind(self) -> str:
        return f"{self.step} {self.status}" if self.step else str(self.status)


@dataclass
class Client:
    """One connection's own state: its index, its random numbers and its idempotency keys."""

    index: int
    tag: str
    rng: random.Random
    seq: int = 0

    def next_id(self) -> str:
        """A name no other request of the run uses (`tag` is the slice's own)."""
        self.seq += 1
        return f"{self.tag}-{self.index}-{self.seq}"

    def next_key(self) -> str:
        """An idempotency key no other request of the run uses."""
        return f"bench-{self.next_id()}"


Operation = Callable[[Connection, Any, Client], Awaitable[Failure | None]]


async def expect(
    conn: Connection,
    status: int,
    method: str,
    target: str,
    *,
    api_key: str | None,
    body: Any = None,
    idempotency_key: str | None = None,
    step: str = "",
    content: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[Failure | None, bytes]:
    """One request that must answer `status`: (None, body), or (the failure, body)."""
    got, payload = await conn.request(
        method,
        target,
        api_key=api_key,
        body=body,
        idempotency_key=idempotency_key,
        content=content,
        headers=headers,
    )
    if got == status:
        return None, payload
    return Failure(step, got, payload[:300].decode(errors="replace")), payload


@dataclass
class LoadSpec:
    port: int
    operation: Operation
    targets: Sequence[Any]
    clients: int
    first_client: int
    total_clients: int
    start_at: float  # time.time() when measuring starts (after the warm-up)
    stop_at: float
    tag: str


@dataclass
class LoadResult:
    latencies: list[float] = field(default_factory=list)  # seconds, measured window only
    errors: Counter[str] = field(default_factory=Counter)
    samples: list[str] = field(default_factory=list)
    first: float = float("inf")
    last: float = 0.0
    cpu_seconds: float = 0.0  # this load process's CPU over the measured window
    cpu_window: float = 0.0

    def fail(self, failure: Failure) -> None:
        self.errors[failure.kind] += 1
        if len(self.samples) < SAMPLES:
            self.samples.append(f"{failure.kind}: {failure.detail}")


async def client(spec: LoadSpec, index: int, result: LoadResult) -> None:
    rng = random.Random(index)  # noqa: S311 (amounts and target choice)
    state = Client(index, spec.tag, rng)
    total = spec.total_clients
    mine = spec.targets[index % len(spec.targets) :: total] or spec.targets
    conn = await Connection.open(spec.port)
    try:
        while True:
            began = time.time()
            if began >= spec.stop_at:
                return
            target = mine[rng.randrange(len(mine))]
            try:
                async with asyncio.timeout(REQUEST_TIMEOUT_SECONDS):
                    failure = await spec.operation(conn, target, state)
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                    TimeoutError, ValueError) as exc:  # fmt: skip
                failure = Failure("connection", 0, repr(exc))
                conn.close()
                conn = await Connection.open(spec.port)
            done = time.time()
            if failure is not None:
                result.fail(failure)  # in the warm-up too: every failure counts
            if began < spec.start_at:
                continue  # warm-up
            result.first = min(result.first, began)
            result.last = max(result.last, done)
            if failure is None:
                result.latencies.append(done - began)
    finally:
        conn.close()


async def own_cpu(spec: LoadSpec, result: LoadResult) -> None:
    """This process's CPU over the measured window."""
    await asyncio.sleep(max(0.0, spec.start_at - time.time()))
    cpu, wall = time.process_time(), time.monotonic()
    await asyncio.sleep(max(0.0, spec.stop_at - time.time()))
    result.cpu_seconds = time.process_time() - cpu
    result.cpu_window = time.monotonic() - wall


async def run_clients(spec: LoadSpec) -> LoadResult:
    result = LoadResult()
    await asyncio.gather(
        own_cpu(spec, result),
        *(client(spec, spec.first_client + i, result) for i in range(spec.clients)),
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
    """One measured window of one operation."""

    latencies: list[float]  # seconds, of the successful operations
    errors: Counter[str]
    window_seconds: float
    cpu: tuple[CpuSample | None, CpuSample | None]  # at its start and at its end
    generator_share: float  # the busiest load process's CPU, as a share of one core
    generator_seconds: float  # the CPU of all the load processes

    @property
    def generator_bound(self) -> bool:
        return self.generator_share >= GENERATOR_BOUND_SHARE


def drive(
    port: int,
    operation: Operation,
    targets: Sequence[Any],
    clients: int,
    procs: int,
    seconds: float,
    tag: str,
    watch: Callable[[], CpuSample | None] = lambda: None,
    warmup: float = WARMUP_SECONDS,
    at_start: Callable[[], None] = lambda: None,
) -> Slice:
    """`operation` from `clients` connections for `seconds` after a warm-up; `tag` makes the
    slice's idempotency keys its own. `at_start` runs when the measured window opens."""
    start_at = time.time() + LEAD_SECONDS + warmup
    stop_at = start_at + seconds
    procs = min(procs, clients)
    per = [clients // procs + (1 if i < clients % procs else 0) for i in range(procs)]
    specs = []
    first = 0
    for n in per:
        specs.append(LoadSpec(port, operation, targets, n, first, clients, start_at, stop_at, tag))
        first += n
    with ProcessPoolExecutor(max_workers=procs) as pool:
        running = [pool.submit(load_process, spec) for spec in specs]
        cpu_before = sample_at(start_at, watch)
        at_start()
        cpu_after = sample_at(stop_at, watch)
        results = [job.result() for job in running]
    errors: Counter[str] = Counter()
    for r in results:
        errors.update(r.errors)
    for sample in [s for r in results for s in r.samples][:SAMPLES]:
        log(f"{tag}: failed: {sample}")
    window = max(r.last for r in results) - min(r.first for r in results)
    share = max((r.cpu_seconds / r.cpu_window for r in results if r.cpu_window > 0), default=0)
    return Slice(
        latencies=[x for r in results for x in r.latencies],
        errors=errors,
        window_seconds=max(0.0, window),
        cpu=(cpu_before, cpu_after),
        generator_share=share,
        generator_seconds=sum(r.cpu_seconds for r in results),
    )
