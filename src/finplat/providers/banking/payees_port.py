"""The banking provider's payees port (see base.py for the whole provider).

A payee is registered at the provider once the platform has verified it; payments name the
provider's payee id. The provider keeps the full account details; the platform keeps only the
last four characters.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol


class ProviderPayeeStatus(StrEnum):
    ACTIVE = "ACTIVE"
    REMOVED = "REMOVED"


@dataclass(frozen=True)
class PayeeDetails:
    """Who to pay and where: the full account details, sent only to the provider."""

    name: str
    payment_type: str  # COMPANY | INDIVIDUAL
    payment_method: str  # SEPA.CREDITTRANSFER | SEPA.INSTANT | FPS | SWIFT
    currency: str
    iban: str | None = None
    account_number: str | None = None
    sort_code: str | None = None
    bic: str | None = None
    bank_name: str | None = None
    bank_country: str | None = None

    def __repr__(self) -> str:  # never print full account details (logs, tracebacks)
        return (
            f"PayeeDetails(payment_method={self.payment_method!r}, currency={self.currency!r}, ...)"
        )


@dataclass(frozen=True)
class ProviderPayee:
    payee_id: str  # bp_pye_...
    account_id: str
    name: str
    payment_method: str
    currency: str
    account_number_last4: str
    status: ProviderPayeeStatus
    created_at: datetime


class PayeesPort(Protocol):
    async def register_payee(
        self,
        *,
        company_id: int,
        account_id: str,
        idempotency_key: str,
        details: PayeeDetails,
    ) -> ProviderPayee:
        """Register a payee for the account (a repeat with the same key returns the first
        registration; the key of another account or company is refused)."""
        ...

    async def payee_by_key(self, *, company_id: int, idempotency_key: str) -> ProviderPayee | None:
        """The payee registered with this key, if the provider received it (finds a
        registration whose answer was lost)."""
        ...

    async def remove_payee(self, *, company_id: int, payee_id: str) -> ProviderPayee:
        """Remove a payee: no payment can name it any more. Removing it again is not an
        error; an unknown payee is 404."""
        ...
