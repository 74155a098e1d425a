"""Business application statuses (lower-case, as the banking provider reports them).

draft → submitted → in_review → approved | rejected | more_information_required; an
application that needs more information is edited and submitted again.
"""

from __future__ import annotations

from finplat.providers.business_onboarding.port import ApplicationState

DRAFT = ApplicationState.DRAFT.value
SUBMITTED = ApplicationState.SUBMITTED.value
IN_REVIEW = ApplicationState.IN_REVIEW.value
APPROVED = ApplicationState.APPROVED.value
REJECTED = ApplicationState.REJECTED.value
MORE_INFORMATION_REQUIRED = ApplicationState.MORE_INFORMATION_REQUIRED.value

# The partner may change the application (compliance, people, documents) and submit it.
EDITABLE = frozenset({DRAFT, MORE_INFORMATION_REQUIRED})
# Waiting for the provider's review.
UNDER_REVIEW = frozenset({SUBMITTED, IN_REVIEW})

# Status changes the provider's callbacks may make, by target status: a late or repeated
# callback never moves an application backwards or out of a final decision.
ALLOWED_FROM: dict[str, frozenset[str]] = {
    IN_REVIEW: frozenset({DRAFT, MORE_INFORMATION_REQUIRED, SUBMITTED}),
    APPROVED: UNDER_REVIEW,
    REJECTED: UNDER_REVIEW,
    MORE_INFORMATION_REQUIRED: UNDER_REVIEW,
}
