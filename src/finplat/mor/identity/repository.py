from __future__ import annotations

from datetime import datetime

from sqlalchemy import update

from finplat.db.dialect import for_update
from finplat.db.repository import CompanyRepository
from finplat.mor.identity.models import MorAccessToken, MorCredential


class CredentialRepository(CompanyRepository[MorCredential]):
    model = MorCredential

    async def by_email(self, email_key: str) -> MorCredential | None:
        stmt = self.scoped().where(MorCredential.email_key == email_key)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def of_user(self, user_id: int, *, lock: bool = False) -> MorCredential | None:
        stmt = self.scoped().where(MorCredential.user_id == user_id)
        if lock:
            stmt = for_update(stmt)
        return (await self.session.execute(stmt)).scalar_one_or_none()


class AccessTokenRepository(CompanyRepository[MorAccessToken]):
    model = MorAccessToken

    async def by_hash(self, token_hash: str) -> MorAccessToken | None:
        stmt = self.scoped().where(MorAccessToken.token_hash == token_hash)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def revoke_all_of(self, user_id: int, *, at: datetime) -> int:
        stmt = (
            update(MorAccessToken)
            .where(
                MorAccessToken.company_id == self.company_id,
                MorAccessToken.user_id == user_id,
                MorAccessToken.revoked_at.is_(None),
                MorAccessToken.expires_at > at,
            )
            .values(revoked_at=at)
        )
        result = await self.session.execute(stmt)
        return int(getattr(result, "rowcount", 0) or 0)
