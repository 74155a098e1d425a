"""Payout approvals: the user confirms one payout's exact terms and price with a one-time
token before the payout can be created (spec: "the unified payouts route needs its existing
verified approval for API-key callers").

Rules:
* `initiate` stores the terms and the price with a one-time token, shown once; only a hash of
  the approval id and the token is kept (the same token scheme as payee verification: 8
  characters without look-alikes, compared in constant time).
* An approval lives 10 minutes from initiation, verified or not.
* A wrong token is counted (and the count committed even though the request fails); the
  fifth locks the approval for good (`FAILED`).
* A payout consumes its approval exactly once: a conditional UPDATE from `VERIFIED` that only
  one request can win; the request's terms must equal the approved terms.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import set_committed_value

from finplat.banking.payees import verification as tokens
from finplat.banking.payouts.models import ApprovalStatus, PayoutApproval
from finplat.banking.payouts.repository import ApprovalRepository
from finplat.errors import ApiError, Conflict, NotFound
from finplat.kit.clock import utcnow
from finplat.users import service as users

APPROVAL_ID_PATTERN = r"^pap_[0-9a-f]{24}$"
TOKEN_PATTERN = tokens.TOKEN_PATTERN
LIFETIME = timedelta(minutes=10)
MAX_ATTEMPTS = 5


class ApprovalNotFound(NotFound):
    code = "APPROVAL_NOT_FOUND"
    message = "No payout approval with that ApprovalId for this user."


class ApprovalNotVerified(Conflict):
    code = "APPROVAL_NOT_VERIFIED"
    message = "The payout approval has not been verified with its token."


class ApprovalExpired(Conflict):
    code = "APPROVAL_EXPIRED"
    message = "The payout approval expired; initiate the payout again."


class ApprovalAlreadyUsed(Conflict):
    code = "APPROVAL_ALREADY_USED"
    message = "The payout approval was already used for a payout."


class ApprovalLocked(Conflict):
    code = "APPROVAL_LOCKED"
    message = "Too many wrong verification tokens: the payout approval is locked."


class ApprovalTermsMismatch(Conflict):
    code = "APPROVAL_TERMS_MISMATCH"
    message = "The payout's terms differ from the approved terms."


class InvalidVerificationToken(ApiError):
    status = 403
    code = "INVALID_VERIFICATION_TOKEN"
    message = "The verification token is not the approval's token."


@dataclass(frozen=True)
class Terms:
    """A payout's terms, resolved (the default funding currency applied)."""

    account_id: str
    budget_id: str
    payee_id: str
    amount_minor: int
    currency: str
    debit_currency: str
    reference: str | None


def new_approval_id() -> str:
    return f"pap_{secrets.token_hex(12)}"


def is_expired(approval: PayoutApproval, now: datetime | None = None) -> bool:
    return approval.expires_at <= (now or utcnow())


def effective_status(approval: PayoutApproval) -> ApprovalStatus:
    status = ApprovalStatus(approval.status)
    if status in (ApprovalStatus.AWAITING_VERIFICATION, ApprovalStatus.VERIFIED) and is_expired(
        approval
    ):
        return ApprovalStatus.EXPIRED
    return status


def terms_of(approval: PayoutApproval) -> Terms:
    return Terms(
        account_id=approval.account_id,
        budget_id=approval.budget_id,
        payee_id=approval.payee_id,
        amount_minor=approval.amount_minor,
        currency=approval.currency,
        debit_currency=approval.debit_currency,
        reference=approval.reference,
    )


async def create(
    session: AsyncSession,
    *,
    company_id: int,
    user_id: int,
    terms: Terms,
    debit_amount_minor: int,
    fee_minor: int,
    rate: str,
) -> tuple[PayoutApproval, str]:
    """Store an approval awaiting verification; returns it with its one-time token."""
    approval_id = new_approval_id()
    token = tokens.new_token()
    now = utcnow()
    approval = await ApprovalRepository(session, company_id).add(
        PayoutApproval(
            id=approval_id,
            user_id=user_id,
            account_id=terms.account_id,
            budget_id=terms.budget_id,
            payee_id=terms.payee_id,
            amount_minor=terms.amount_minor,
            currency=terms.currency,
            debit_currency=terms.debit_currency,
            reference=terms.reference,
            debit_amount_minor=debit_amount_minor,
            fee_minor=fee_minor,
            rate=rate,
            status=ApprovalStatus.AWAITING_VERIFICATION.value,
            token_hash=tokens.digest(approval_id, token),
            failed_attempts=0,
            expires_at=now + LIFETIME,
            created_at=now,
            updated_at=now,
        )
    )
    return approval, token


async def get(
    session: AsyncSession, *, company_id: int, user_id: int, approval_id: str, lock: bool = False
) -> PayoutApproval:
    """The user's approval; 404 `USER_NOT_FOUND` for an unknown user, else
    `APPROVAL_NOT_FOUND`."""
    approval = await ApprovalRepository(session, company_id).find(approval_id, lock=lock)
    if approval is None or approval.user_id != user_id:
        await users.get_user(session, company_id=company_id, user_id=user_id)
        raise ApprovalNotFound()
    return approval


async def verify(
    session: AsyncSession, *, company_id: int, user_id: int, approval_id: str, token: str
) -> PayoutApproval:
    """Confirm the approval with its token. Repeating a successful verification with the
    right token answers the verified approval again."""
    approval = await get(
        session, company_id=company_id, user_id=user_id, approval_id=approval_id, lock=True
    )
    status = ApprovalStatus(approval.status)
    if status is ApprovalStatus.FAILED:
        raise ApprovalLocked()
    if status is ApprovalStatus.USED:
        raise ApprovalAlreadyUsed()
    if is_expired(approval):
        raise ApprovalExpired()
    now = utcnow()
    if not tokens.matches(approval.id, token, approval.token_hash):
        approval.failed_attempts += 1
        approval.updated_at = now
        locked = approval.failed_attempts >= MAX_ATTEMPTS
        if locked:
            approval.status = ApprovalStatus.FAILED.value
        # The count must survive the error (which rolls the request back).
        await session.commit()
        if locked:
            raise ApprovalLocked()
        left = MAX_ATTEMPTS - approval.failed_attempts
        raise InvalidVerificationToken(
            f"The verification token is not the approval's token; {left} attempt(s) left."
        )
    if status is ApprovalStatus.AWAITING_VERIFICATION:
        approval.status = ApprovalStatus.VERIFIED.value
        approval.verified_at = now
        approval.updated_at = now
        await session.flush()
    return approval


async def consume(
    session: AsyncSession, *, company_id: int, user_id: int, approval_id: str, terms: Terms
) -> PayoutApproval:
    """Check the approval allows exactly these terms, and use it up (once)."""
    approval = await get(session, company_id=company_id, user_id=user_id, approval_id=approval_id)
    status = ApprovalStatus(approval.status)
    if status is ApprovalStatus.USED:
        raise ApprovalAlreadyUsed()
    if status is ApprovalStatus.FAILED:
        raise ApprovalLocked()
    if is_expired(approval):
        raise ApprovalExpired()
    if status is not ApprovalStatus.VERIFIED:
        raise ApprovalNotVerified()
    if terms_of(approval) != terms:
        raise ApprovalTermsMismatch()
    now = utcnow()
    if not await ApprovalRepository(session, company_id).consume(approval.id, now=now):
        # Lost a race: another request used it (or it expired) in the meantime.
        raise ApprovalAlreadyUsed()
    # As the UPDATE wrote them: the object is not left dirty for a flush to write again.
    set_committed_value(approval, "status", ApprovalStatus.USED.value)
    set_committed_value(approval, "used_at", now)
    set_committed_value(approval, "updated_at", now)
    return approval
