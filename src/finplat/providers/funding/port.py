from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class FundingConfirmation:
    provider_reference: str


class FundingRail(Protocol):
    """A provider that confirms an incoming transfer of company funds.

    `idempotency_key` makes the call safe to repeat: the same key always confirms the same
    single transfer.
    """

    name: str

    async def confirm_incoming_funds(
        self, *, idempotency_key: str, company_id: int, currency: str, amount_minor: int
    ) -> FundingConfirmation: ...
