"""Which keyring seals and opens the sealed columns of each database engine.

`finplat.db.engine.create_engine` registers the keyring of its settings with the engine it
makes, so every reader and writer of a sealed column (a request, a worker, a CLI command) uses
the keys configured for that database, and two engines in one process (tests, tools) cannot
use each other's.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from finplat.sealing.keyring import SecretKeyring

# Keyed by the engine's dialect: what a column type is handed when it converts a value.
_keyrings: WeakKeyDictionary[Dialect, SecretKeyring] = WeakKeyDictionary()


class KeyringNotRegistered(RuntimeError):
    def __init__(self) -> None:
        super().__init__(
            "No secret keyring for this database engine: make it with finplat.db.engine."
        )


def register(engine: AsyncEngine, keyring: SecretKeyring) -> None:
    _keyrings[engine.dialect] = keyring


def keyring_for(dialect: Dialect) -> SecretKeyring:
    keyring = _keyrings.get(dialect)
    if keyring is None:
        raise KeyringNotRegistered()
    return keyring


def keyring_of(session: AsyncSession) -> SecretKeyring:
    return keyring_for(session.get_bind().dialect)
