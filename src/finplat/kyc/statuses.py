"""Base identity verification (the user's `KycStatus`) and the four KYC methods."""

from __future__ import annotations

from enum import StrEnum

NOT_STARTED = "NOT_STARTED"
PENDING = "PENDING"
APPROVED = "APPROVED"
REJECTED = "REJECTED"
RESUBMISSION_REQUIRED = "RESUBMISSION_REQUIRED"


class KycMethod(StrEnum):
    HOSTED_LINK = "HOSTED_LINK"
    MOBILE_SDK = "MOBILE_SDK"
    REUSABLE_IDENTITY = "REUSABLE_IDENTITY"
    MANUAL = "MANUAL"


class Outcome(StrEnum):
    """A verification decision, as the sandbox endpoint and the sandbox page take it."""

    APPROVED = "APPROVED"
    REJECTED = "REJECTED"
    RESUBMISSION = "RESUBMISSION"
