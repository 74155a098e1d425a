"""Scratch databases for tests: a temp SQLite file, or a fresh database on a PostgreSQL server.

`FINPLAT_TEST_DATABASE_URL` picks PostgreSQL (a `postgresql+asyncpg://` URL to any existing
database on the server); without it the tests use SQLite.
"""

from __future__ import annotations

import asyncio
import os
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
                name = f"finplat_test_template_{secrets.token_hex(4)}"
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
            await _on_server(base, f'DROP DATABASE IF EXISTS "{self.postgresql_name}" WITH (FORCE)')
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
    name = f"finplat_test_{label}_{secrets.token_hex(4)}"
    copy = f' TEMPLATE "{template}"' if template else ""
    await _on_server(base, f'CREATE DATABASE "{name}"{copy}')
    try:
        yield _database_url(base, name)
    finally:
        await _on_server(base, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
