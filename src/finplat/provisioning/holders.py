"""The cardholder a provider opens an account for, built from the user and, for a US person,
the SSN the verification provider holds (fetched when needed, never stored here)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.kyc.repository import KycSubmissionRepository
from finplat.kyc.service import NO_IDENTITY_PROVIDER
from finplat.providers.calls import commit_then_call
from finplat.providers.cards.port import Cardholder
from finplat.providers.names import BankProvider, ExternalProvider
from finplat.providers.registry import Providers, configured
from finplat.users.models import User


def reference(user: User, provider: BankProvider) -> str:
    """The stable reference a provider knows the user by: one account per user, ever."""
    return f"{provider.value}-{user.company_id}-{user.id}"


async def cardholder(
    session: AsyncSession, providers: Providers, user: User, provider: BankProvider
) -> Cardholder:
    submission = await KycSubmissionRepository(session, user.company_id).for_user(user.id)
    ssn = None
    if submission is not None:
        identity = configured(providers.identity, NO_IDENTITY_PROVIDER)
        applicant_id = submission.applicant_id
        ssn = await commit_then_call(
            session,
            providers.policy,
            provider=ExternalProvider.IDENTITY.value,
            operation="tax_id",
            call=lambda: identity.tax_id(company_id=user.company_id, applicant_id=applicant_id),
            idempotent=True,
        )
    return Cardholder(
        reference=reference(user, provider),
        first_name=user.first_name,
        last_name=user.last_name,
        email=user.email,
        phone=user.phone,
        date_of_birth=user.date_of_birth,
        country=user.country,
        address=user.address,
        city=user.city,
        zip_code=user.zip_code,
        ssn=ssn,
    )
