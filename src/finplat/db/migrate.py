"""Apply the Alembic migrations programmatically (used by `finplat serve|migrate` and tests)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

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


def upgrade_to_head(database_url: str) -> None:
    """Bring the database schema to the newest revision; safe to call on every start.

    Must not be called from inside a running event loop (Alembic's env runs its own); async
    callers use `asyncio.to_thread(upgrade_to_head, url)`.
    """
    ensure_sqlite_directory(database_url)
    command.upgrade(alembic_config(database_url), "head")
