"""The switch provider (`switchprov`, provider type 3): a programme link per user, created
with the user's first switch-provider card."""

from __future__ import annotations

from typing import Protocol

from finplat.providers.cards.port import Cardholder, HolderAccount


class SwitchProvider(Protocol):
    name: str

    async def create_link(self, *, company_id: int, holder: Cardholder) -> HolderAccount:
        """Idempotent by `holder.reference`: one link per reference, ever."""
        ...
