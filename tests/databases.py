"""Scratch databases for tests: a temp SQLite file, or a fresh database on a PostgreSQL server.

`FINPLAT_TEST_DATABASE_URL` picks PostgreSQL (a `postgresql+asyncpg://` URL to any existing
database on the server); without it the tests use SQLite.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg
from sqlalchemy.engine import make_url

from finplat.db.migrate import upgrade_to_head

TEST_DATABASE_ENV = "FINPLAT_TEST_DATABASE_URL"


def server_url() -> str | None:
    return os.environ.get(TEST_DATABASE_ENV) or None


def backend() -> str:
    return "postgresql" if server_url() else "sqlite"


def asyncpg_dsn(url: str) -> str:
    """The PostgreSQL database of a SQLAlchemy `url`, as `asyncpg.connect` takes it."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def _on_server(base: str, statement: str) -> None:
    """Run one statement (CREATE or DROP DATABASE) on the PostgreSQL server of `base`."""
    admin = await asyncpg.connect(asyncpg_dsn(base))
    try:
        await admin.execute(statement)
    finally:
        await admin.close()


def _database_name(label: str) -> str:
    """A scratch database's name. It carries the test run's process id, so that a later run
    can tell a database left behind by a run that was killed (`drop_abandoned_databases`)."""
    return f"finplat_test_{label}_{os.getpid()}_{secrets.token_hex(4)}"


def _dropping(name: str) -> str:
    """The statement that drops a scratch database, even with a session still connected."""
    return f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'


_SCRATCH_NAME = re.compile(r"finplat_test_.+_(\d+)_[0-9a-f]{8}")
_THIS_MACHINE = {None, "", "127.0.0.1", "localhost", "::1"}


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


async def drop_abandoned_databases() -> list[str]:
    """Drop the scratch databases of test runs that are no longer running (a run killed before
    its own cleanup leaves them), and name them. Only on a server of this machine, where a
    run's process id means something; a database of a running run is never touched."""
    base = server_url()
    if base is None or make_url(base).host not in _THIS_MACHINE:
        return []
    admin = await asyncpg.connect(asyncpg_dsn(base))
    try:
        names = await admin.fetch(
            "SELECT datname FROM pg_database WHERE datname LIKE 'finplat\\_test\\_%'"
        )
        abandoned = [
            row["datname"]
            for row in names
            if (found := _SCRATCH_NAME.fullmatch(row["datname"]))
            and not _running(int(found.group(1)))
        ]
        for name in abandoned:
            await admin.execute(_dropping(name))
    finally:
        await admin.close()
    return abandoned


def _database_url(base: str, name: str) -> str:
    return make_url(base).set(database=name).render_as_string(hide_password=False)


class _Template:
    """The latest schema, migrated once per test run, that `migrated_database` copies: a
    SQLite file, or a PostgreSQL database used as `CREATE DATABASE ... TEMPLATE`."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.sqlite_folder: tempfile.TemporaryDirectory[str] | None = None
        self.postgresql_name: str | None = None

    async def sqlite_file(self) -> Path:
        async with self.lock:
            if self.sqlite_folder is None:
                folder = tempfile.TemporaryDirectory(prefix="finplat-template-")
                url = f"sqlite+aiosqlite:///{Path(folder.name) / 'finplat.db'}"
                await asyncio.to_thread(upgrade_to_head, url)
                self.sqlite_folder = folder
            return Path(self.sqlite_folder.name) / "finplat.db"

    async def postgresql_database(self, base: str) -> str:
        async with self.lock:
            if self.postgresql_name is None:
                name = _database_name("template")
                await _on_server(base, f'CREATE DATABASE "{name}"')
                await asyncio.to_thread(upgrade_to_head, _database_url(base, name))
                self.postgresql_name = name
            return self.postgresql_name

    async def drop(self) -> None:
        if self.sqlite_folder is not None:
            self.sqlite_folder.cleanup()
            self.sqlite_folder = None
        base = server_url()
        if self.postgresql_name is not None and base is not None:
            await _on_server(base, _dropping(self.postgresql_name))
            self.postgresql_name = None


TEMPLATE = _Template()


@asynccontextmanager
async def migrated_database(label: str = "run") -> AsyncIterator[str]:
    """Yield the URL of a new database at the latest schema; drop it afterwards. It is a copy
    of one database migrated once per run: migrating from scratch takes seconds each time."""
    base = server_url()
    if base is None:
        template = await TEMPLATE.sqlite_file()
        with tempfile.TemporaryDirectory(prefix=f"finplat-{label}-") as folder:
            shutil.copyfile(template, Path(folder) / "finplat.db")
            yield f"sqlite+aiosqlite:///{Path(folder) / 'finplat.db'}"
        return
    template_name = await TEMPLATE.postgresql_database(base)
    async with scratch_database(label, template=template_name) as url:
        yield url


@asynccontextmanager
async def scratch_database(
    label: str = "run", *, template: str | None = None
) -> AsyncIterator[str]:
    """Yield the URL of a new database, empty or (PostgreSQL) a copy of `template`; drop it
    afterwards."""
    base = server_url()
    if base is None:
        with tempfile.TemporaryDirectory(prefix=f"finplat-{label}-") as folder:
            yield f"sqlite+aiosqlite:///{Path(folder) / 'finplat.db'}"
        return
    name = _database_name(label)
    copy = f' TEMPLATE "{template}"' if template else ""
    await _on_server(base, f'CREATE DATABASE "{name}"{copy}')
    try:
        yield _database_url(base, name)
    finally:
        await _on_server(base, _dropping(name))
