"""Provider accounts of a user: each selected provider's own approval and its account.

Rules (spec, "States and transitions"): create user, then verify identity (each selected
provider has its own approval), then provision. A banking-provider status change is reported
with `account.status_updated` (domain `account`, provider `bankprov`).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.events import service as events
from finplat.providers.names import BankProvider
from finplat.provisioning import statuses
from finplat.provisioning.models import ProviderAccount
from finplat.provisioning.repository import ProviderAccountRepository

ACCOUNT_STATUS_UPDATED = "account.status_updated"


async def find(
    session: AsyncSession,
    *,
    company_id: int,
    user_id: int,
    provider: BankProvider,
    lock: bool = False,
) -> ProviderAccount | None:
    """The user's account at the provider; with `lock`, read under its row lock (for a status
    decided from what is read)."""
    return await ProviderAccountRepository(session, company_id).find(
        user_id, provider.value, lock=lock
    )


async def accounts_of(
    session: AsyncSession, *, company_id: int, user_id: int
) -> Sequence[ProviderAccount]:
    return await ProviderAccountRepository(session, company_id).for_user(user_id)


async def by_provider_account(
    session: AsyncSession, *, company_id: int, provider: BankProvider, account_id: str
) -> ProviderAccount | None:
    return await ProviderAccountRepository(session, company_id).by_provider_account(
        provider.value, account_id
    )


async def set_status(
    session: AsyncSession,
    *,
    company_id: int,
    user_id: int,
    provider: BankProvider,
    status: str,
    provider_account_id: str | None = None,
    reason: str | None = None,
) -> ProviderAccount:
    """Record a provider's approval state for a user (creating the row on first use).

    A given `provider_account_id` is kept; None leaves the known one. Emits
    `account.status_updated` when a banking-provider status really changes. The row is read
    under its lock, so parallel changes to the same status (two provider callbacks, say) report
    the change once.
    """
    repo = ProviderAccountRepository(session, company_id)
    account = await repo.find(user_id, provider.value, lock=True)
    previous = account.status if account is not None else None
    if account is None:
        account = await repo.add(
            ProviderAccount(
                user_id=user_id,
                provider=provider.value,
                status=status,
                provider_account_id=provider_account_id,
                status_reason=reason,
            )
        )
    else:
        account.status = status
        account.status_reason = reason
        if provider_account_id is not None:
            account.provider_account_id = provider_account_id
        await session.flush()
    if provider is BankProvider.BANKPROV and previous != status:
        await events.record(
            session,
            company_id=company_id,
            type_=ACCOUNT_STATUS_UPDATED,
            domain="account",
            provider=BankProvider.BANKPROV.value,
            data={
                "userId": user_id,
                "accountId": account.provider_account_id,
                "previousStatus": previous,
                "status": status,
                "reason": reason,
            },
        )
    return account


async def change_status_from(
    session: AsyncSession,
    *,
    company_id: int,
    user_id: int,
    provider: BankProvider,
    current: str,
    status: str,
) -> str:
    """Change the account's status to `status` only while it is still `current`, checked under
    the row lock: a status read earlier may have moved on since (a provider callback deciding
    the account, say). Returns the status the account has afterwards."""
    account = await ProviderAccountRepository(session, company_id).find(
        user_id, provider.value, lock=True
    )
    if account is None:
        return statuses.NOT_STARTED
    if account.status != current:
        return account.status
    changed = await set_status(
        session, company_id=company_id, user_id=user_id, provider=provider, status=status
    )
    return changed.status
