"""Scratch databases for tests: a temp SQLite file, or a fresh database on a PostgreSQL server.

`FINPLAT_TEST_DATABASE_URL` picks PostgreSQL (a `postgresql+asyncpg://` URL to any existing
database on the server); without it the tests use SQLite.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg
from sqlalchemy.engine import make_url

TEST_DATABASE_ENV = "FINPLAT_TEST_DATABASE_URL"


def server_url() -> str | None:
    return os.environ.get(TEST_DATABASE_ENV) or None


def backend() -> str:
    return "postgresql" if server_url() else "sqlite"


@asynccontextmanager
async def scratch_database(label: str = "run") -> AsyncIterator[str]:
    """Yield the URL of a new, empty database; drop it afterwards."""
    base = server_url()
    if base is None:
        with tempfile.TemporaryDirectory(prefix=f"finplat-{label}-") as folder:
            yield f"sqlite+aiosqlite:///{Path(folder) / 'finplat.db'}"
        return
    url = make_url(base)
    name = f"finplat_test_{label}_{secrets.token_hex(4)}"
    admin_dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)
    admin = await asyncpg.connect(admin_dsn)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    try:
        yield url.set(database=name).render_as_string(hide_password=False)
    finally:
        admin = await asyncpg.connect(admin_dsn)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()
