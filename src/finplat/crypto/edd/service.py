"""Crypto enhanced due diligence (spec: `POST /api/v2/crypto-virtual-accounts/verification/
edd?userId=`, every field required).

The answers go to the identity verification provider, on the user's applicant (the user must
be identity-verified: 409 `KYC_NOT_APPROVED`); the platform keeps only that they were
submitted, and when (`crypto.edd.submitted`, and `CryptoEdd` in the KYC detailed status). A
new submission replaces the last. Crypto flows of at least `FINPLAT_CRYPTO_EDD_THRESHOLD` in
one operation require it (`require_for`, 409 `EDD_REQUIRED`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.crypto.edd.models import SUBMITTED, CryptoEdd
from finplat.crypto.edd.repository import EddRepository
from finplat.errors import Conflict
from finplat.events import service as events
from finplat.kit.clock import utcnow
from finplat.kyc import approval
from finplat.kyc import service as kyc
from finplat.providers.calls import commit_then_call
from finplat.providers.names import ExternalProvider
from finplat.providers.registry import Providers, configured

NO_IDENTITY = "No identity verification provider is configured."


class EddRequired(Conflict):
    code = "EDD_REQUIRED"
    message = (
        "This amount needs the user's enhanced due diligence first: POST "
        "/api/v2/crypto-virtual-accounts/verification/edd."
    )


async def submit(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    answers: dict[str, Any],
) -> CryptoEdd:
    await approval.require_base_approval(session, company_id=company_id, user_id=user_id)
    submission = await kyc.require_submission(session, company_id=company_id, user_id=user_id)
    identity = configured(providers.identity, NO_IDENTITY)
    applicant_id = submission.applicant_id
    await commit_then_call(
        session,
        providers.policy,
        provider=ExternalProvider.IDENTITY.value,
        operation="submit_edd",
        call=lambda: identity.submit_edd(
            company_id=company_id, applicant_id=applicant_id, answers=answers
        ),
        idempotent=True,  # storing the same answers again changes nothing
    )
    recorded = await EddRepository(session, company_id).record(
        user_id=user_id, status=SUBMITTED, applicant_id=applicant_id, now=utcnow()
    )
    await events.record(
        session,
        company_id=company_id,
        type_="crypto.edd.submitted",
        domain="crypto",
        data={"userId": user_id, "status": recorded.status, "submittedAt": recorded.submitted_at},
    )
    return recorded


async def status_of(session: AsyncSession, *, company_id: int, user_id: int) -> CryptoEdd | None:
    return await EddRepository(session, company_id).of_user(user_id)


async def require_for(
    session: AsyncSession, *, company_id: int, user_id: int, amount: Decimal, threshold: Decimal
) -> None:
    """409 `EDD_REQUIRED` when `amount` reaches `threshold` and the user has no EDD."""
    if amount < threshold:
        return
    if await status_of(session, company_id=company_id, user_id=user_id) is None:
        raise EddRequired()
