from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.db.repository import CompanyRepository, lock_variants, of_company
from finplat.provisioning.models import ProviderAccount


class ProviderAccountRepository(CompanyRepository[ProviderAccount]):
    model = ProviderAccount

    async def find(
        self, user_id: int, provider: str, *, lock: bool = False
    ) -> ProviderAccount | None:
        params = self.bound(user_id=user_id, provider=provider)
        return (await self.session.execute(_FIND[lock], params)).scalar_one_or_none()

    async def for_user(self, user_id: int) -> Sequence[ProviderAccount]:
        stmt = self.scoped().where(ProviderAccount.user_id == user_id).order_by(ProviderAccount.id)
        return (await self.session.execute(stmt)).scalars().all()

    async def by_provider_account(self, provider: str, account_id: str) -> ProviderAccount | None:
        params = self.bound(provider=provider, account_id=account_id)
        return (await self.session.execute(_BY_PROVIDER_ACCOUNT, params)).scalar_one_or_none()


# Every card and banking operation of a user reads its provider account: built once.
_FIND = lock_variants(
    of_company(
        ProviderAccount,
        ProviderAccount.user_id == bindparam("user_id"),
        ProviderAccount.provider == bindparam("provider"),
    )
)
# Every banking operation resolves the `AccountId` it is given: built once too.
_BY_PROVIDER_ACCOUNT = of_company(
    ProviderAccount,
    ProviderAccount.provider == bindparam("provider"),
    ProviderAccount.provider_account_id == bindparam("account_id"),
)


async def awaiting_account(
    session: AsyncSession, *, provider: str, reason: str, company_id: int | None, limit: int
) -> list[tuple[int, int]]:
    """`(company_id, user_id)` of the accounts at `provider` not opened yet and waiting for
    `reason`, every company's unless `company_id` is given (the background job's query),
    oldest first."""
    stmt = select(ProviderAccount.company_id, ProviderAccount.user_id).where(
        ProviderAccount.provider == provider,
        ProviderAccount.provider_account_id.is_(None),
        ProviderAccount.status_reason == reason,
    )
    if company_id is not None:
        stmt = stmt.where(ProviderAccount.company_id == company_id)
    found = await session.execute(stmt.order_by(ProviderAccount.id).limit(limit))
    return [(owner, user_id) for owner, user_id in found]
