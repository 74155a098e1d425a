"""Applying the verification provider's review to the user and each selected provider.

Rules (spec, "States and transitions"):
* Approved: `KycStatus` APPROVED. The card-provider account is then provisioned (when the
  company's default card provider is `cardprov`); the switch provider becomes ELIGIBLE (its
  link comes with the first card); the banking provider stays PENDING while its own
  account-onboarding checks are unfinished.
* Resubmission or further action required: `RESUBMISSION_REQUIRED`; banking provider
  `pending_documents`.
* Failed or declined: REJECTED; banking provider `rejected`, the others REJECTED.
"""

from __future__ import annotations

from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.errors import Conflict
from finplat.events import service as events
from finplat.kit.clock import utcnow
from finplat.kyc import statuses
from finplat.kyc.applicant_reference import user_id_of
from finplat.kyc.repository import KycSubmissionRepository
from finplat.providers.identity.port import RejectType, ReviewAnswer
from finplat.providers.names import BankProvider, ExternalProvider
from finplat.provisioning import service as provider_accounts
from finplat.provisioning import statuses as ps
from finplat.provisioning.card_accounts import AWAITING_PROVISIONING
from finplat.provisioning.selection import default_card_provider, selected_providers
from finplat.users import service as users
from finplat.users.repository import UserRepository

log = structlog.get_logger("finplat.kyc")
KYC_STATUS_UPDATED = "kyc.status_updated"


class KycReviewBeforeStart(Conflict):
    code = "KYC_REVIEW_BEFORE_START"
    message = "The applicant's KYC start is not recorded yet; deliver the review again later."


# (banking provider, card and switch providers) per base outcome; None keeps the state.
_BANKPROV_AFTER = {
    statuses.APPROVED: ps.PENDING,
    statuses.RESUBMISSION_REQUIRED: ps.PENDING_DOCUMENTS,
    statuses.REJECTED: ps.REJECTED_BANKPROV,
}
_FINAL_BANKPROV = {ps.APPROVED_BANKPROV, ps.REJECTED_BANKPROV}
# A start is refused once the user is decided: a review for an applicant no start recorded
# can then never be matched.
_FINAL = {statuses.APPROVED, statuses.REJECTED}


def outcome_of(data: dict[str, Any]) -> str:
    result = data["reviewResult"]
    if ReviewAnswer(result["reviewAnswer"]) is ReviewAnswer.GREEN:
        return statuses.APPROVED
    if RejectType(result.get("reviewRejectType", RejectType.FINAL)) is RejectType.RETRY:
        return statuses.RESUBMISSION_REQUIRED
    return statuses.REJECTED


async def apply_review(session: AsyncSession, company_id: int, data: dict[str, Any]) -> None:
    """Apply the provider's review to the submission, the user's `KycStatus` and each selected
    provider, under the user's row lock: a KYC start recording PENDING at the same moment
    either goes first (and the review follows) or sees the review and is refused."""
    applicant_id = str(data["applicantId"])
    outcome = outcome_of(data)
    submission = await KycSubmissionRepository(session, company_id).by_applicant(applicant_id)
    if submission is None:
        user_id = user_id_of(data.get("externalUserId"), company_id=company_id)
        user = await UserRepository(session, company_id).get(user_id) if user_id else None
        if user is not None and user.kyc_status not in _FINAL:
            # The user's start is still between the provider's answer and its record (a
            # shared identity is reviewed at once): refused, so the provider delivers it again.
            raise KycReviewBeforeStart()
        log.info("kyc_review_for_unknown_applicant")
        return
    user = await users.get_user(session, company_id=company_id, user_id=submission.user_id)
    # Locked and re-read (the start locks the user too), so `previous` is what the review
    # really replaces and the two status writes cannot interleave.
    await session.refresh(user, with_for_update=True)
    previous = user.kyc_status
    submission.status = outcome
    submission.reviewed_at = utcnow()
    submission.review_reason = None if outcome == statuses.APPROVED else outcome
    user.kyc_status = outcome
    await session.flush()
    default_card = await default_card_provider(session, company_id)
    for provider in await selected_providers(session, user):
        await _apply_to_provider(session, user.company_id, user.id, provider, outcome, default_card)
    await events.record(
        session,
        company_id=company_id,
        type_=KYC_STATUS_UPDATED,
        domain="kyc",
        provider=ExternalProvider.IDENTITY.value,
        data={
            "userId": user.id,
            "externalUserId": user.external_user_id,
            "previousStatus": previous,
            "status": outcome,
        },
    )


async def _apply_to_provider(
    session: AsyncSession,
    company_id: int,
    user_id: int,
    provider: BankProvider,
    outcome: str,
    default_card: BankProvider,
) -> None:
    # Locked: the provider's own callbacks change the account without the user's lock, and a
    # status decided from a stale read would overwrite their decision (an approval, say).
    account = await provider_accounts.find(
        session, company_id=company_id, user_id=user_id, provider=provider, lock=True
    )
    current = account.status if account is not None else ps.NOT_STARTED
    status: str | None
    reason: str | None = None
    if provider is BankProvider.BANKPROV:
        status = None if current in _FINAL_BANKPROV else _BANKPROV_AFTER[outcome]
    elif account is not None and account.provider_account_id is not None:
        status = None  # provisioned: the provider's own review decides from now on
    elif outcome == statuses.REJECTED:
        status = ps.REJECTED
    elif outcome == statuses.RESUBMISSION_REQUIRED:
        status = ps.PENDING
    elif provider is BankProvider.SWITCHPROV:
        status = ps.ELIGIBLE
    elif provider is default_card:
        status, reason = ps.PENDING, AWAITING_PROVISIONING
    else:
        status = ps.ELIGIBLE
    if status is not None and (status != current or reason is not None):
        await provider_accounts.set_status(
            session,
            company_id=company_id,
            user_id=user_id,
            provider=provider,
            status=status,
            reason=reason,
        )
