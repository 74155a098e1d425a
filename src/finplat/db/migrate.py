"""Apply the Alembic migrations programmatically (used by `finplat serve|migrate` and tests)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationInfo
from alembic.script import ScriptDirectory

from finplat.db.engine import ensure_sqlite_directory


def migrations_dir() -> Path:
    packaged = Path(__file__).resolve().parent.parent / "migrations"
    if packaged.is_dir():
        return packaged
    # Editable install / source checkout: the repository's top-level migrations/ folder.
    return Path(__file__).resolve().parents[3] / "migrations"


def alembic_config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    config.set_main_option("file_template", "%%(year)d-%%(month).2d-%%(day).2d_%%(slug)s")
    config.attributes["database_url"] = database_url
    return config


@dataclass(frozen=True)
class AppliedMigration:
    revision: str
    title: str


def upgrade_to_head(database_url: str) -> list[AppliedMigration]:
    """Bring the database schema to the newest revision; safe to call on every start. Returns
    the migrations applied, oldest first: none when the schema was already the newest.

    Must not be called from inside a running event loop (Alembic's env runs its own); async
    callers use `asyncio.to_thread(upgrade_to_head, url)`.
    """
    ensure_sqlite_directory(database_url)
    applied: list[AppliedMigration] = []

    def record(*, step: MigrationInfo, **_: Any) -> None:
        script = step.up_revision
        applied.append(AppliedMigration(str(step.up_revision_id), getattr(script, "doc", "")))

    config = alembic_config(database_url)
    config.attributes["on_version_apply"] = record
    command.upgrade(config, "head")
    return applied


def head_revision() -> str:
    """The newest revision the migrations define."""
    return str(ScriptDirectory.from_config(alembic_config("")).get_current_head())
