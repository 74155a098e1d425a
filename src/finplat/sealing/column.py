"""A string column stored sealed: plaintext in Python, `fps1:...` in the database."""

from __future__ import annotations

from typing import Any

from sqlalchemy import String
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from finplat.sealing.engines import keyring_for


class SealedString(TypeDecorator[str]):
    """Seals on the way in and opens on the way out with the engine's keyring.

    Each write seals afresh (a new nonce), so equal secrets are stored differently and the
    column cannot be compared or searched: only read by the row's key.
    """

    impl = String
    cache_ok = True

    def __init__(self, length: int, *, purpose: str) -> None:
        super().__init__(length)
        self.purpose = purpose

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        if value is None:
            return None
        return keyring_for(dialect).seal(value, purpose=self.purpose)

    def process_result_value(self, value: Any, dialect: Dialect) -> str | None:
        if value is None:
            return None
        return keyring_for(dialect).open(str(value), purpose=self.purpose)
