"""The benchmark's own database: a fresh one per run, on PostgreSQL or an embedded SQLite
file under var/, dropped when the run ends; and what a killed run left behind, dropped by the
next (`leftovers`). The ledger of a run's database is verified before it goes.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import asyncpg
import leftovers

ROOT = Path(__file__).resolve().parent.parent
FINPLAT = str(ROOT / ".venv" / "bin" / "finplat")
PG_SERVER = "postgresql://postgres@127.0.0.1:5432/postgres"
SQLITE_FOLDER = ROOT / "var"
_SQLITE_FILES = ("", "-wal", "-shm", "-journal")


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def asyncpg_dsn(server: str) -> str:
    """A server given as SQLAlchemy names it (`postgresql+asyncpg://...`), as asyncpg takes it."""
    scheme, sep, rest = server.partition("://")
    return f"postgresql://{rest}" if sep and scheme.startswith("postgresql") else server


class PostgresDatabase:
    """`finplat_bench_<pid>_<random>` on a PostgreSQL server (any database of it names it)."""

    backend = "postgresql"

    def __init__(self, server: str = PG_SERVER) -> None:
        self.server = asyncpg_dsn(server)
        self.name = leftovers.database_name()

    @property
    def url(self) -> str:
        """The database as `FINPLAT_DATABASE_URL` takes it."""
        base = self.server.split("://", 1)[1].rsplit("/", 1)[0]
        return f"postgresql+asyncpg://{base}/{self.name}"

    @property
    def cpu_name(self) -> str | None:
        """The name its backends show in their process titles (`cpu_accounting`)."""
        return self.name

    def _on(self, database: str) -> str:
        return self.server.rsplit("/", 1)[0] + f"/{database}"

    def create(self) -> None:
        asyncio.run(self._execute(f'CREATE DATABASE "{self.name}"'))

    def drop(self) -> None:
        asyncio.run(self._execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)'))

    def drop_abandoned(self) -> list[str]:
        """Drop the databases of benchmark runs that were killed before their cleanup."""
        return asyncio.run(self._drop_abandoned())

    def analyze(self) -> None:
        asyncio.run(self._execute("ANALYZE", database=self.name))

    async def _execute(self, statement: str, database: str | None = None) -> None:
        conn = await asyncpg.connect(self._on(database) if database else self.server)
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    async def _drop_abandoned(self) -> list[str]:
        conn = await asyncpg.connect(self.server)
        try:
            rows = await conn.fetch(
                "SELECT datname FROM pg_database WHERE datname LIKE $1", leftovers.PREFIX + "%"
            )
        finally:
            await conn.close()
        gone = leftovers.abandoned(row["datname"] for row in rows)
        for name in gone:
            await self._execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        return gone


class SqliteDatabase:
    """The embedded default: `var/finplat_bench_<pid>_<random>.db`, with its WAL files."""

    backend = "sqlite"
    cpu_name = None  # inside the server's process: its CPU is the server's

    def __init__(self, folder: Path = SQLITE_FOLDER) -> None:
        self.folder = folder
        self.name = leftovers.database_name()

    @property
    def path(self) -> Path:
        return self.folder / f"{self.name}.db"

    @property
    def url(self) -> str:
        return f"sqlite+aiosqlite:///{self.path}"

    def create(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)  # `finplat serve` makes the file

    def drop(self) -> None:
        for suffix in _SQLITE_FILES:
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def drop_abandoned(self) -> list[str]:
        names = {p.name.split(".db", 1)[0] for p in self.folder.glob(f"{leftovers.PREFIX}*.db*")}
        gone = leftovers.abandoned(names)
        for name in gone:
            for suffix in _SQLITE_FILES:
                (self.folder / f"{name}.db{suffix}").unlink(missing_ok=True)
        return gone


BenchDatabase = PostgresDatabase | SqliteDatabase


def verify_ledger(env: dict[str, str]) -> bool:
    """`finplat ledger verify` on the database `env` names; its report goes to stderr."""
    done = subprocess.run(  # noqa: S603
        [FINPLAT, "ledger", "verify"], env=env, cwd=ROOT, capture_output=True, text=True
    )
    for line in (done.stdout + done.stderr).strip().splitlines():
        log(f"ledger verify: {line}")
    return done.returncode == 0
