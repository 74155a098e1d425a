"""Sandbox decisions on verification: what a provider's reviewers would decide, delivered
through the provider callback path like any real outcome."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.bankprov_onboarding import service as personal
from finplat.business import service as business
from finplat.errors import Conflict, ServiceUnavailable, ValidationFailed
from finplat.kyc import service as kyc
from finplat.kyc.statuses import Outcome
from finplat.providers.cards.port import AccountReviewSimulation
from finplat.providers.identity.port import IdentityReviewSimulation, RejectType, ReviewAnswer
from finplat.providers.names import BankProvider
from finplat.providers.registry import Providers
from finplat.providers.sandbox import delivery as sandbox_delivery
from finplat.provisioning import card_accounts
from finplat.provisioning import service as provider_accounts
from finplat.provisioning.holders import reference
from finplat.users import service as users

# What the provider's reviewers answer for each sandbox outcome (also the hosted page's).
REVIEW_OF_OUTCOME = {
    Outcome.APPROVED: (ReviewAnswer.GREEN, RejectType.FINAL),
    Outcome.REJECTED: (ReviewAnswer.RED, RejectType.FINAL),
    Outcome.RESUBMISSION: (ReviewAnswer.RED, RejectType.RETRY),
}


class NoProviderAccount(Conflict):
    code = "PROVIDER_ACCOUNT_NOT_FOUND"
    message = "The user has no account with this provider to decide on."


async def complete(
    session: AsyncSession,
    providers: Providers,
    factory: async_sessionmaker[AsyncSession],
    *,
    secret: str,
    company_id: int,
    user_id: int,
    outcome: Outcome,
    provider: BankProvider | None,
) -> None:
    """Decide base identity verification (no provider) or one provider's own checks, then
    deliver the resulting callbacks and run the provisioning they unlock."""
    if provider is None:
        await _review_identity(session, providers, company_id, user_id, outcome)
    elif provider is BankProvider.BANKPROV:
        await _decide_banking(session, providers, company_id, user_id, outcome)
    else:
        await _review_account(session, providers, company_id, user_id, provider, outcome)
    await session.commit()
    await sandbox_delivery.deliver_due(factory, secret=secret, company_id=company_id)
    await card_accounts.provision_waiting(factory, providers, company_id=company_id)
    session.expire_all()


async def _review_identity(
    session: AsyncSession, providers: Providers, company_id: int, user_id: int, outcome: Outcome
) -> None:
    submission = await kyc.require_submission(session, company_id=company_id, user_id=user_id)
    simulation = providers.identity
    if not isinstance(simulation, IdentityReviewSimulation):
        raise ServiceUnavailable("The identity provider is not a sandbox.")
    answer, reject_type = REVIEW_OF_OUTCOME[outcome]
    await session.commit()
    await simulation.review(
        company_id=company_id,
        applicant_id=submission.applicant_id,
        answer=answer,
        reject_type=reject_type,
    )


async def _decide_banking(
    session: AsyncSession, providers: Providers, company_id: int, user_id: int, outcome: Outcome
) -> None:
    # Personal users go through the banking provider's onboarding, businesses through KYB.
    user = await users.get_user(session, company_id=company_id, user_id=user_id)
    decide = personal if user.account_type == "personal" else business
    await decide.complete_in_sandbox(
        session, providers, company_id=company_id, user_id=user_id, outcome=outcome
    )


async def _review_account(
    session: AsyncSession,
    providers: Providers,
    company_id: int,
    user_id: int,
    provider: BankProvider,
    outcome: Outcome,
) -> None:
    if outcome is Outcome.RESUBMISSION:
        raise ValidationFailed(
            f"The {provider.value} account can only be APPROVED or REJECTED.",
            validation_errors={"Outcome": ["APPROVED or REJECTED for this provider."]},
        )
    user = await users.get_user(session, company_id=company_id, user_id=user_id)
    account = await provider_accounts.find(
        session, company_id=company_id, user_id=user_id, provider=provider
    )
    if account is None or account.provider_account_id is None:
        raise NoProviderAccount()
    adapter = providers.cardprov if provider is BankProvider.CARDPROV else providers.switchprov
    if not isinstance(adapter, AccountReviewSimulation):
        raise ServiceUnavailable(f"The {provider.value} provider is not a sandbox.")
    await session.commit()
    await adapter.review_account(
        company_id=company_id,
        reference=reference(user, provider),
        approved=outcome is Outcome.APPROVED,
    )
