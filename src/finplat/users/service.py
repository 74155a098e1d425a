"""Users: creation, lookup, listing and tier selection."""

from __future__ import annotations

from datetime import date
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.errors import Conflict, NotFound
from finplat.kit.pagination import PageRequest, PageSlice, fetch_page
from finplat.tiers import service as tiers
from finplat.users.models import User
from finplat.users.repository import UserRepository
from finplat.users.schemas import UserCreate

STATUS_ACTIVE = "ACTIVE"
KYC_NOT_STARTED = "NOT_STARTED"
PERSONAL = "personal"
# What a user created with only a name and an email (a MOR simple user) has for the identity
# fields the users table requires: no phone, and a birth date and country ("ZZ", ISO 3166's
# "unknown") that `complete_identity` replaces before the user's KYC starts.
UNKNOWN_PHONE = ""
UNKNOWN_BIRTH_DATE = date(1900, 1, 1)
UNKNOWN_COUNTRY = "ZZ"


class UserNotFound(NotFound):
    code = "USER_NOT_FOUND"
    message = "No user with that id."


class UserAlreadyExists(Conflict):
    code = "USER_ALREADY_EXISTS"
    message = "A user with this ExternalUserId already exists."


class TierNotActive(Conflict):
    code = "TIER_NOT_ACTIVE"
    message = "The tier is not active and cannot be selected."


class TierAccountTypeMismatch(Conflict):
    code = "TIER_ACCOUNT_TYPE_MISMATCH"
    message = "The tier is for a different account type than the user's."


async def create_user(session: AsyncSession, *, company_id: int, data: UserCreate) -> User:
    """Create a user: `Status` ACTIVE, `KycStatus` NOT_STARTED, on the company's default tier
    for its account type. `ExternalUserId` is unique within the company (409
    USER_ALREADY_EXISTS)."""
    return await _create(
        session,
        company_id,
        {
            "external_user_id": data.ExternalUserId,
            "email": data.Email,
            "first_name": data.FirstName,
            "last_name": data.LastName,
            "phone": data.Phone,
            "account_type": data.AccountType,
            "date_of_birth": data.DateOfBirth,
            "address": data.Address,
            "city": data.City,
            "country": data.Country,
            "zip_code": data.ZipCode,
        },
    )


async def create_named_user(
    session: AsyncSession,
    *,
    company_id: int,
    external_user_id: str,
    email: str,
    first_name: str,
    last_name: str,
) -> User:
    """A personal user known only by name and email (a MOR simple user): ACTIVE, KYC
    NOT_STARTED, on the company's default personal tier, its other identity fields unknown
    (see `UNKNOWN_*`) until `complete_identity`."""
    return await _create(
        session,
        company_id,
        {
            "external_user_id": external_user_id,
            "email": email,
            "first_name": first_name,
            "last_name": last_name,
            "phone": UNKNOWN_PHONE,
            "account_type": PERSONAL,
            "date_of_birth": UNKNOWN_BIRTH_DATE,
            "country": UNKNOWN_COUNTRY,
        },
    )


async def _create(session: AsyncSession, company_id: int, identity: dict[str, Any]) -> User:
    """A new ACTIVE user, KYC NOT_STARTED, on the company's default tier for its account
    type; the ExternalUserId's unique key decides a duplicate, also between parallel
    requests (one statement, no read first)."""
    tier = await tiers.default_tier(
        session, company_id=company_id, account_type=identity["account_type"]
    )
    user = await UserRepository(session, company_id).create_unless_taken(
        identity
        | {
            "status": STATUS_ACTIVE,
            "kyc_status": KYC_NOT_STARTED,
            "tier_id": tier.id if tier else None,
        }
    )
    if user is None:
        raise UserAlreadyExists()
    return user


async def complete_identity(
    session: AsyncSession, *, company_id: int, user_id: int, date_of_birth: date, country: str
) -> User:
    """Set the birth date and country a user's identity verification needs."""
    user = await get_user(session, company_id=company_id, user_id=user_id)
    user.date_of_birth = date_of_birth
    user.country = country
    await session.flush()
    return user


async def get_user(session: AsyncSession, *, company_id: int, user_id: int) -> User:
    """A user of the caller's company; any other id, including another company's, is 404."""
    user = await UserRepository(session, company_id).get(user_id)
    if user is None:
        raise UserNotFound()
    return user


async def list_users(
    session: AsyncSession,
    *,
    company_id: int,
    page: PageRequest,
    external_user_id: str | None = None,
) -> PageSlice[User]:
    stmt = UserRepository(session, company_id).listing(external_user_id=external_user_id)
    return await fetch_page(session, stmt, page)


async def select_tier(
    session: AsyncSession, *, company_id: int, user_id: int, tier_id: int
) -> User:
    """Put a user on a tier: the tier must be the company's, active, and for the user's
    `AccountType`."""
    user = await get_user(session, company_id=company_id, user_id=user_id)
    tier = await tiers.get_tier(session, company_id=company_id, tier_id=tier_id)
    if not tier.is_active:
        raise TierNotActive()
    if tier.account_type != user.account_type:
        raise TierAccountTypeMismatch(
            f"Tier {tier.id} is for {tier.account_type} users; this user is {user.account_type}."
        )
    user.tier_id = tier.id
    await session.flush()
    return user
