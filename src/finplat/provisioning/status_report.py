"""Each selected provider's approval state for a user, as the API reports it."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.crypto.edd import service as crypto_edd
from finplat.crypto.edd.models import CryptoEdd
from finplat.kyc.models import KycSubmission
from finplat.kyc.repository import KycSubmissionRepository
from finplat.kyc.schemas import CryptoEddStatus, DetailedStatusResponse
from finplat.kyc.statuses import KycMethod
from finplat.providers.names import BankProvider, provider_type
from finplat.provisioning import service
from finplat.provisioning import statuses as ps
from finplat.provisioning.schemas import ProviderStatus
from finplat.provisioning.selection import ORDER, selected_providers
from finplat.users import service as users
from finplat.users.models import User


@dataclass(frozen=True)
class StatusReport:
    user: User
    submission: KycSubmission | None
    providers: list[ProviderStatus]
    edd: CryptoEdd | None = None


async def provider_statuses(
    session: AsyncSession, *, company_id: int, user_id: int
) -> StatusReport:
    """The user's selected providers plus any other it holds an account with, in a fixed
    order (card, switch, banking)."""
    user = await users.get_user(session, company_id=company_id, user_id=user_id)
    submission = await KycSubmissionRepository(session, company_id).for_user(user_id)
    accounts = {
        BankProvider(a.provider): a
        for a in await service.accounts_of(session, company_id=company_id, user_id=user_id)
    }
    shown = set(await selected_providers(session, user)) | set(accounts)
    providers = []
    for provider in ORDER:
        if provider not in shown:
            continue
        account = accounts.get(provider)
        providers.append(
            ProviderStatus(
                Provider=provider,
                ProviderType=provider_type(provider),
                Status=account.status if account else ps.NOT_STARTED,
                HasAccount=bool(account and account.provider_account_id),
                AccountId=account.provider_account_id if account else None,
                UpdatedAt=account.updated_at if account else None,
            )
        )
    edd = await crypto_edd.status_of(session, company_id=company_id, user_id=user_id)
    return StatusReport(user, submission, providers, edd)


def detailed_status(report: StatusReport) -> DetailedStatusResponse:
    submission = report.submission
    return DetailedStatusResponse(
        UserId=report.user.id,
        KycStatus=report.user.kyc_status,
        Method=KycMethod(submission.method) if submission else None,
        ApplicantId=submission.applicant_id if submission else None,
        ReviewedAt=submission.reviewed_at if submission else None,
        Providers=report.providers,
        CryptoEdd=(
            CryptoEddStatus(Status=report.edd.status, SubmittedAt=report.edd.submitted_at)
            if report.edd
            else None
        ),
    )
