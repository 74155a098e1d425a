"""The gate later steps rely on: base identity verification approved."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.errors import Conflict
from finplat.kyc import statuses
from finplat.users import service as users
from finplat.users.models import User


class KycNotApproved(Conflict):
    code = "KYC_NOT_APPROVED"
    message = "The user's identity verification is not approved yet."


async def require_base_approval(session: AsyncSession, *, company_id: int, user_id: int) -> User:
    """The user (404 if not the company's), whose base KYC must be APPROVED (409 otherwise)."""
    user = await users.get_user(session, company_id=company_id, user_id=user_id)
    if user.kyc_status != statuses.APPROVED:
        raise KycNotApproved(f"The user's KycStatus is {user.kyc_status}; it must be APPROVED.")
    return user
