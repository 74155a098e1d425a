"""The benchmark's databases, and those a killed run left behind.

A run drops its database when it ends, but a run killed before that (Ctrl-C twice, the machine
stopping) leaves a database of millions of rows on the server. Each database's name carries its
run's process id, so the next run can tell the ones whose run is gone and drop them.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Callable, Iterable

PREFIX = "finplat_bench_"
_NAME = re.compile(rf"{PREFIX}(\d+)_[0-9a-f]{{8}}")


def database_name(pid: int | None = None) -> str:
    """A fresh database name for the run with process id `pid` (this process by default)."""
    return f"{PREFIX}{os.getpid() if pid is None else pid}_{secrets.token_hex(4)}"


def running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def abandoned(names: Iterable[str], is_running: Callable[[int], bool] = running) -> list[str]:
    """The benchmark databases among `names` whose run is no longer running. Names of another
    shape (an older run's, without a process id) are left alone: nothing tells whose they are."""
    return [
        name
        for name in names
        if (found := _NAME.fullmatch(name)) and not is_running(int(found.group(1)))
    ]
