"""The banking provider's payees port (see base.py for the whole provider)."""

from __future__ import annotations

from typing import Protocol


class PayeesPort(Protocol):
    pass
