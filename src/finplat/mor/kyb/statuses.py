"""The MOR merchant's KYB statuses, and what the banking provider's states become.

SUBMITTED → IN_REVIEW → APPROVED | REJECTED | NEEDS_INFO. The merchant submits again only
after REJECTED (a new application at the provider) or NEEDS_INFO (the same application,
completed); while SUBMITTED or IN_REVIEW, and once APPROVED, a submission is 409.
"""

from __future__ import annotations

from finplat.providers.business_onboarding.port import ApplicationState

SUBMITTED = "SUBMITTED"
IN_REVIEW = "IN_REVIEW"
APPROVED = "APPROVED"
REJECTED = "REJECTED"
NEEDS_INFO = "NEEDS_INFO"

PENDING = frozenset({SUBMITTED, IN_REVIEW})
RESUBMITTABLE = frozenset({REJECTED, NEEDS_INFO})

OF_PROVIDER = {
    ApplicationState.SUBMITTED.value: SUBMITTED,
    ApplicationState.IN_REVIEW.value: IN_REVIEW,
    ApplicationState.APPROVED.value: APPROVED,
    ApplicationState.REJECTED.value: REJECTED,
    ApplicationState.MORE_INFORMATION_REQUIRED.value: NEEDS_INFO,
}

# Changes a provider callback may make, by target: never backwards, never out of a decision.
ALLOWED_FROM: dict[str, frozenset[str]] = {
    IN_REVIEW: frozenset({SUBMITTED}),
    APPROVED: PENDING,
    REJECTED: PENDING,
    NEEDS_INFO: PENDING,
}


def event_type(status: str) -> str:
    """`mor.kyb.submitted`, `mor.kyb.in_review`, `mor.kyb.approved`, ..."""
    return f"mor.kyb.{status.lower()}"
