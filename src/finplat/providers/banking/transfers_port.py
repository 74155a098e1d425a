"""The banking provider's transfers port (see base.py for the whole provider)."""

from __future__ import annotations

from typing import Protocol


class TransfersPort(Protocol):
    pass
