"""The test run's scratch databases (`tests.databases`): a database a killed run left behind
on this machine's PostgreSQL is dropped by the next run; one of a run still going is kept."""

from __future__ import annotations

import os
import subprocess
import sys

import asyncpg
import pytest

from tests.databases import asyncpg_dsn, backend, drop_abandoned_databases, server_url

pytestmark = pytest.mark.skipif(backend() != "postgresql", reason="PostgreSQL databases")


def _finished_process_id() -> int:
    """The id of a process that has exited (and been reaped)."""
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid


async def _databases(admin: asyncpg.Connection) -> set[str]:
    rows = await admin.fetch("SELECT datname FROM pg_database")
    return {row["datname"] for row in rows}


async def test_a_killed_runs_database_is_dropped_and_a_running_ones_is_kept() -> None:
    url = server_url()
    assert url is not None
    abandoned = f"finplat_test_killed_{_finished_process_id()}_0123abcd"
    running = f"finplat_test_alive_{os.getpid()}_0123abcd"
    admin = await asyncpg.connect(asyncpg_dsn(url))
    try:
        for name in (abandoned, running):
            await admin.execute(f'CREATE DATABASE "{name}"')
        try:
            dropped = await drop_abandoned_databases()
            assert abandoned in dropped
            assert running not in dropped
            left = await _databases(admin)
            assert abandoned not in left
            assert running in left
        finally:
            for name in (abandoned, running):
                await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


async def test_a_database_not_named_as_a_scratch_database_is_kept() -> None:
    url = server_url()
    assert url is not None
    other = f"finplat_test_{_finished_process_id()}"  # no label and random part: not ours
    admin = await asyncpg.connect(asyncpg_dsn(url))
    try:
        await admin.execute(f'CREATE DATABASE "{other}"')
        try:
            assert other not in await drop_abandoned_databases()
            assert other in await _databases(admin)
        finally:
            await admin.execute(f'DROP DATABASE IF EXISTS "{other}" WITH (FORCE)')
    finally:
        await admin.close()
