"""Where a bench run's CPU goes: the server's processes, the bench database's PostgreSQL
backends, and the machine as a whole, read from /proc (Linux) at the start and at the end of
each measured window.

Throughput on a shared machine moves with its speed (a third within an hour here); CPU time
per operation, split by process, is what says which side a change has to make cheaper.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_PROC = Path("/proc")
_TICKS = os.sysconf("SC_CLK_TCK")  # clock ticks per CPU second


@dataclass(frozen=True)
class CpuSample:
    """Seconds of CPU used so far: by each process of interest (by pid), and by the machine."""

    server: dict[int, float]
    database: dict[int, float]
    machine_busy: float
    wall: float


def _process_seconds(stat: str) -> tuple[int, float]:
    """(process group, user + system seconds) from a /proc/<pid>/stat line."""
    fields = stat.rsplit(")", 1)[1].split()
    return int(fields[2]), (int(fields[11]) + int(fields[12])) / _TICKS


def _machine_busy_seconds() -> float:
    values = [int(v) for v in (_PROC / "stat").read_text().split("\n", 1)[0].split()[1:9]]
    idle = values[3] + values[4]  # idle and iowait
    return (sum(values) - idle) / _TICKS


def sample(server_group: int, database: str | None, wall: float) -> CpuSample | None:
    """The CPU used so far by the server's process group and the PostgreSQL backends serving
    `database` (none for an embedded database); None where /proc is not there to read."""
    if not (_PROC / "stat").exists():
        return None
    server: dict[int, float] = {}
    backends: dict[int, float] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # gone meanwhile
        group, seconds = _process_seconds(stat)
        if group == server_group:
            server[int(entry.name)] = seconds
        elif database and command.startswith("postgres:") and f" {database} " in command:
            backends[int(entry.name)] = seconds
    return CpuSample(server, backends, _machine_busy_seconds(), wall)


def _used(before: dict[int, float], after: dict[int, float]) -> float:
    # A process started in the window counts from zero; one that ended in it is lost (rare:
    # the server's workers and the pool's connections live through the run).
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


def per_operation(
    windows: Sequence[tuple[CpuSample | None, CpuSample | None]], ops: int
) -> dict[str, float]:
    """Microseconds of CPU per operation for the server and PostgreSQL over the measured windows
    (each a sample at its start and at its end), and how busy the whole machine was in them
    (percent of all its cores)."""
    pairs = [(b, a) for b, a in windows if b is not None and a is not None]
    if not pairs or len(pairs) < len(windows) or ops <= 0:
        return {}
    wall = sum(after.wall - before.wall for before, after in pairs)
    server = sum(_used(before.server, after.server) for before, after in pairs)
    database = sum(_used(before.database, after.database) for before, after in pairs)
    busy = sum(after.machine_busy - before.machine_busy for before, after in pairs)
    cores = os.cpu_count() or 1
    return {
        "server_cpu_us_per_op": round(server / ops * 1e6),
        "postgres_cpu_us_per_op": round(database / ops * 1e6),
        "machine_busy_pct": round(100 * busy / (wall * cores), 1),
    }


def busy_elsewhere_pct(
    windows: Sequence[tuple[CpuSample | None, CpuSample | None]], own_seconds: float
) -> float | None:
    """How busy the machine was over the windows with anything but the server, the database's
    backends and `own_seconds` of the benchmark's own CPU (its load generator), in percent of
    all its cores: what the other users of a shared machine took from the run."""
    pairs = [(b, a) for b, a in windows if b is not None and a is not None]
    if not pairs or len(pairs) < len(windows):
        return None
    wall = sum(after.wall - before.wall for before, after in pairs)
    busy = sum(after.machine_busy - before.machine_busy for before, after in pairs)
    ours = sum(
        _used(before.server, after.server) + _used(before.database, after.database)
        for before, after in pairs
    )
    cores = os.cpu_count() or 1
    return round(max(0.0, 100 * (busy - ours - own_seconds) / (wall * cores)), 1)
