"""Transaction types and states (the spec names the resource, not its values)."""

from __future__ import annotations

from enum import StrEnum


class TransactionType(StrEnum):
    INCOMING_PAYMENT = "INCOMING_PAYMENT"  # SEPA/FPS credit into a budget
    PAYOUT = "PAYOUT"  # to a verified payee
    FX_TRADE = "FX_TRADE"  # one currency of a budget into another
    BUDGET_TRANSFER = "BUDGET_TRANSFER"  # between two budgets of one user
    MASTER_TRANSFER = "MASTER_TRANSFER"  # from a user's budget to the company's master account
    MANDATE_COLLECTION = "MANDATE_COLLECTION"  # collected under a mandate into the master account


class TransactionStatus(StrEnum):
    PENDING = "PENDING"  # reserved; the provider has not decided (or its answer was lost)
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"  # the provider refused or returned it; the reservation was released
    CANCELLED = "CANCELLED"


FINAL_STATUSES = frozenset(
    {TransactionStatus.COMPLETED, TransactionStatus.FAILED, TransactionStatus.CANCELLED}
)
