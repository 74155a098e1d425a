"""The banking provider's fx port (see base.py for the whole provider)."""

from __future__ import annotations

from typing import Protocol


class FxPort(Protocol):
    pass
