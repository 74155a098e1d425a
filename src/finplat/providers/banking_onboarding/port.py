"""The banking provider's onboarding port.

A user applies once; the provider opens an account in status `pending`, may ask for documents
and for text answers (information requests, some tied to a person of a business
application), and reports every account status change with an `account.status_changed`
callback `{accountId, status, reason}` (status `pending`, `pending_documents`, `active` or
`rejected`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum
from typing import Protocol, runtime_checkable

ACCOUNT_STATUS_CHANGED = "account.status_changed"


class AccountStatus(StrEnum):
    """The provider's own account states (as its callbacks report them)."""

    PENDING = "pending"
    PENDING_DOCUMENTS = "pending_documents"
    ACTIVE = "active"
    REJECTED = "rejected"


class Decision(StrEnum):
    """A sandbox decision on an account's checks."""

    APPROVED = "APPROVED"
    REJECTED = "REJECTED"
    RESUBMISSION = "RESUBMISSION"


@dataclass(frozen=True)
class ProofOfAddress:
    media_type: str
    data: bytes
    issued_on: date | None  # as the applicant stated it; the provider's review reads the file


@dataclass(frozen=True)
class PersonalApplication:
    """What a personal applicant declares, as the provider takes it."""

    user_reference: str
    requested_features: tuple[str, ...]
    main_purpose: str
    source_of_funds: str
    destination_of_funds: str
    currencies_required: str
    annual_volume: str
    number_of_payments: str
    card_purposes: str | None
    atm_withdrawals_required: bool | None
    number_of_cards_required: int | None
    card_annual_spend: str | None
    proof_of_address: ProofOfAddress


@dataclass(frozen=True)
class OnboardingReceipt:
    correlation_id: str
    account_id: str
    status: AccountStatus


@dataclass(frozen=True)
class DocumentReceipt:
    document_id: str
    page_count: int


@dataclass(frozen=True)
class InformationRequest:
    request_id: str
    question: str
    person_id: str | None
    created_at: datetime


@dataclass(frozen=True)
class Outstanding:
    """What the provider still waits for on an account."""

    documents_required: bool
    information: list[InformationRequest]


@dataclass(frozen=True)
class InformationAnswer:
    request_id: str
    answer: str


class BankingOnboarding(Protocol):
    """Every call is keyed so that a retry after a lost answer gets the first answer."""

    async def submit_personal_onboarding(
        self, *, company_id: int, idempotency_key: str, application: PersonalApplication
    ) -> OnboardingReceipt:
        """Open (or, for a key already used, return) the applicant's account, `pending`. A
        repeat with the same key while the account is pending replaces the answers."""
        ...

    async def upload_document(
        self, *, company_id: int, account_id: str, idempotency_key: str, pdf: bytes
    ) -> DocumentReceipt:
        """Add one PDF to the account's file; satisfies an outstanding document request."""
        ...

    async def information_requests(self, *, company_id: int, account_id: str) -> Outstanding:
        """The account's unanswered information requests, oldest first, and whether documents
        are requested."""
        ...

    async def answer_information(
        self, *, company_id: int, account_id: str, answers: Sequence[InformationAnswer]
    ) -> Outstanding:
        """Answer requests (all or none); returns what is still outstanding. An unknown request
        is refused with 404, one already answered differently with 409; repeating the same
        answer changes nothing."""
        ...


@runtime_checkable
class SandboxDecisions(Protocol):
    """What only the sandbox provider offers: deciding checks and asking for information."""

    async def decide(self, *, company_id: int, account_id: str, outcome: Decision) -> None: ...

    async def request_information(
        self,
        company_id: int,
        account_id: str,
        questions: Sequence[str],
        person_id: str | None = None,
    ) -> list[InformationRequest]: ...
