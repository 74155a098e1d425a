"""The card issuer (`cardprov`): cardholder accounts (cards follow in the cards issue)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Protocol, runtime_checkable

ACCOUNT_REVIEWED = "account.reviewed"


@dataclass(frozen=True)
class Cardholder:
    """The person an account is opened for; `ssn` is forwarded from identity verification."""

    reference: str
    first_name: str
    last_name: str
    email: str
    phone: str
    date_of_birth: date
    country: str
    address: str | None = None
    city: str | None = None
    zip_code: str | None = None
    ssn: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class HolderAccount:
    account_id: str
    status: str  # ACTIVE, PENDING (the provider's own checks are running) or REJECTED


class CardIssuer(Protocol):
    name: str

    async def create_account(self, *, company_id: int, holder: Cardholder) -> HolderAccount:
        """Idempotent by `holder.reference`: one account per reference, ever."""
        ...


@runtime_checkable
class AccountReviewSimulation(Protocol):
    """Sandbox only: decide an account the provider left pending."""

    async def review_account(self, *, company_id: int, reference: str, approved: bool) -> None: ...
