"""The banking provider's transfers port: moving money between two budgets of one account, or
from a budget to the company's master account at the provider (see base.py for the whole
provider).

Transfers are keyed by the caller's idempotency key: a repeat with the same key returns the
first transfer and moves nothing again, and `transfer_by_key` finds a transfer whose answer
was lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol


class ProviderTransferStatus(StrEnum):
    PENDING = "PENDING"  # accepted; the source is debited, the destination not yet credited
    COMPLETED = "COMPLETED"  # both sides moved
    FAILED = "FAILED"  # refused after acceptance; the provider returned the money to the source


@dataclass(frozen=True)
class ProviderTransfer:
    transfer_id: str  # "bp_trf_..."
    status: ProviderTransferStatus
    from_budget_id: str
    to_budget_id: str | None  # None: the company's master account at the provider
    currency: str
    amount_minor: int
    reason: str | None
    created_at: datetime
    completed_at: datetime | None


class TransfersPort(Protocol):
    async def transfer(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        from_budget_id: str,
        to_budget_id: str | None,
        currency: str,
        amount_minor: int,
    ) -> ProviderTransfer:
        """Move `amount_minor` of `currency` from one budget to another budget of the same
        account, or (`to_budget_id` None) to the company's master account. Refuses a budget
        that does not hold the currency or a balance that does not cover the amount. A repeat
        with the same key returns the first transfer (refused if its terms differ)."""
        ...

    async def transfer_by_key(
        self, *, company_id: int, idempotency_key: str
    ) -> ProviderTransfer | None:
        """The transfer made with this key, or None if the provider never received it."""
        ...
