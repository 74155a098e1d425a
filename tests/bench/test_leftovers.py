"""The benchmark's databases (`bench/leftovers.py`): a killed run's are found by the next."""

from __future__ import annotations

import os

from tests.bench.bench_modules import load

leftovers = load("leftovers")


def test_a_database_name_carries_the_runs_process_id() -> None:
    name = leftovers.database_name()
    assert name.startswith(f"finplat_bench_{os.getpid()}_")
    assert leftovers.abandoned([name]) == []  # this run is running


def test_the_databases_of_runs_no_longer_running_are_abandoned() -> None:
    live, dead = leftovers.database_name(101), leftovers.database_name(202)
    assert leftovers.abandoned([live, dead], is_running=lambda pid: pid == 101) == [dead]


def test_names_of_another_shape_are_left_alone() -> None:
    names = ["finplat_bench_1a2b3c4d", "finplat_bench_7_xyz", "finplat_test_x_7_1a2b3c4d", "test"]
    assert leftovers.abandoned(names, is_running=lambda pid: False) == []
