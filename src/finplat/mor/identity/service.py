"""MOR simple users, their sign-in and their bearer tokens.

Rules:
* A simple user is an ordinary personal user of the MOR company (users domain) with a
  credential: its email, unique in the company compared without regard to case (409
  `MOR_USER_EMAIL_EXISTS`), and its password's argon2id hash. The password must meet the
  policy of `passwords.check_policy` (400 naming `Password`).
* `issue_token`: the right email and password of an ACTIVE simple user of the key's company
  give a bearer token living `FINPLAT_MOR_TOKEN_TTL_SECONDS` (15 minutes by default). Anything
  else is 401 `INVALID_CREDENTIALS`, one message whatever was wrong; failures are counted per
  email and per address and past the limits the endpoint answers 429 (see `throttle`).
* A token is kept only as its SHA-256; it is refused (401) once expired or revoked, when its
  user is no longer ACTIVE, or with another company's key. `revoke_token` revokes the token
  presented (a token already unknown, expired or revoked answers the same, so the call is
  safe to repeat); changing the password revokes every token of the user.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from dataclasses import dataclass
from datetime import date, datetime, timedelta

import structlog
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards.service import CardView
from finplat.config import Settings
from finplat.errors import ApiError, Conflict
from finplat.kit.clock import utcnow
from finplat.kyc import service as kyc
from finplat.kyc.schemas import KycQuestionnaire
from finplat.kyc.service import KycSession
from finplat.kyc.statuses import KycMethod
from finplat.mor.cards import assignments
from finplat.mor.identity import passwords
from finplat.mor.identity.models import MorAccessToken, MorCredential
from finplat.mor.identity.repository import AccessTokenRepository, CredentialRepository
from finplat.mor.identity.throttle import SignInThrottle
from finplat.providers.registry import Providers
from finplat.users import service as users
from finplat.users.models import User

TOKEN_PREFIX = "mor_at_"  # noqa: S105 (a prefix, not a secret)
log = structlog.get_logger("finplat.mor.identity")


class EmailExists(Conflict):
    code = "MOR_USER_EMAIL_EXISTS"
    message = "A simple user with this Email already exists in the company."


class InvalidCredentials(ApiError):
    status = 401
    code = "INVALID_CREDENTIALS"
    message = "The email or the password is not right."


class BearerRequired(ApiError):
    status = 401
    code = "BEARER_TOKEN_INVALID"
    message = (
        "This route needs `Authorization: Bearer <AccessToken>` of a simple user of the key's "
        "company, from POST /api/v2/mor/public/auth/token; the token is missing, expired, "
        "revoked or not the company's."
    )


class WrongCurrentPassword(ApiError):
    status = 403
    code = "CURRENT_PASSWORD_WRONG"
    message = "CurrentPassword is not the user's password."


@dataclass(frozen=True)
class SimpleUser:
    user: User
    credential: MorCredential


@dataclass(frozen=True)
class IssuedToken:
    access_token: str
    expires_at: datetime


def email_key(email: str) -> str:
    """How emails are compared: without regard to case."""
    return email.casefold()


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def create_simple_user(
    session: AsyncSession,
    settings: Settings,
    *,
    company_id: int,
    email: str,
    first_name: str,
    last_name: str,
    password: str,
) -> SimpleUser:
    """Add a simple user to the key's MOR company (spec: all of `Email`, `FirstName`,
    `LastName`, `Password` required); the password is kept only as its argon2id hash."""
    passwords.check_policy(password, email=email)
    key = email_key(email)
    credentials = CredentialRepository(session, company_id)
    if await credentials.by_email(key) is not None:
        raise EmailExists()
    password_hash = await passwords.hash_password(settings, password)
    user = await users.create_named_user(
        session,
        company_id=company_id,
        external_user_id=f"mor:{uuid.uuid4().hex}",
        email=email,
        first_name=first_name,
        last_name=last_name,
    )
    try:
        credential = await credentials.add(
            MorCredential(user_id=user.id, email_key=key, password_hash=password_hash)
        )
    except IntegrityError:
        # A concurrent request took the email between the check and the insert.
        raise EmailExists() from None
    return SimpleUser(user, credential)


async def issue_token(
    session: AsyncSession,
    settings: Settings,
    throttle: SignInThrottle,
    *,
    company_id: int,
    email: str,
    password: str,
    address: str,
) -> IssuedToken:
    """A bearer token for the simple user `email` of the key's company, if `password` is its
    password (401 `INVALID_CREDENTIALS` otherwise; 429 past the failure limits)."""
    key = email_key(email)
    await throttle.check(company_id, key, address)
    credential = await CredentialRepository(session, company_id).by_email(key)
    user = (
        None
        if credential is None
        else await users.get_user(session, company_id=company_id, user_id=credential.user_id)
    )
    # An unknown email still costs a verification, so the time taken does not tell which
    # emails have an account.
    stored = credential.password_hash if credential is not None else _decoy(settings)
    right = await passwords.verify_password(settings, stored, password)
    if credential is None or user is None or not right or user.status != users.STATUS_ACTIVE:
        await throttle.count_failure(company_id, key, address)
        log.info("mor_sign_in_failed", company_id=company_id)
        raise InvalidCredentials()
    if passwords.needs_rehash(settings, credential.password_hash):
        credential.password_hash = await passwords.hash_password(settings, password)
    now = utcnow()
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    expires_at = now + timedelta(seconds=settings.mor_token_ttl_seconds)
    await AccessTokenRepository(session, company_id).add(
        MorAccessToken(
            user_id=credential.user_id,
            token_hash=token_hash(token),
            created_at=now,
            expires_at=expires_at,
        )
    )
    return IssuedToken(token, expires_at)


_DECOYS: dict[tuple[int, int, int], str] = {}


def _decoy(settings: Settings) -> str:
    """A hash of a random password at the configured cost (made once per cost)."""
    cost = (
        settings.mor_password_time_cost,
        settings.mor_password_memory_kib,
        settings.mor_password_parallelism,
    )
    if cost not in _DECOYS:
        _DECOYS[cost] = passwords.hasher(settings).hash(secrets.token_urlsafe(16))
    return _DECOYS[cost]


async def bearer_user(session: AsyncSession, *, company_id: int, token: str | None) -> User:
    """The ACTIVE simple user of the key's company whose live token this is (401 otherwise)."""
    if not token or not token.startswith(TOKEN_PREFIX):
        raise BearerRequired()
    found = await AccessTokenRepository(session, company_id).by_hash(token_hash(token))
    if found is None or found.revoked_at is not None or found.expires_at <= utcnow():
        raise BearerRequired()
    user = await users.get_user(session, company_id=company_id, user_id=found.user_id)
    if user.status != users.STATUS_ACTIVE:
        raise BearerRequired()
    return user


async def revoke_token(session: AsyncSession, *, company_id: int, token: str) -> None:
    """Revoke the presented token (nothing happens to a token unknown, expired or already
    revoked: revoking is safe to repeat and tells nothing)."""
    found = await AccessTokenRepository(session, company_id).by_hash(token_hash(token))
    if found is not None and found.revoked_at is None:
        found.revoked_at = utcnow()
        await session.flush()


async def change_password(
    session: AsyncSession,
    settings: Settings,
    *,
    company_id: int,
    user: User,
    current_password: str,
    new_password: str,
) -> None:
    """Replace the user's password (the current one must be right: 403) and revoke every
    token of the user, the one in use included: whoever held a token signs in again."""
    credential = await CredentialRepository(session, company_id).of_user(user.id, lock=True)
    if credential is None:
        raise WrongCurrentPassword()
    if not await passwords.verify_password(settings, credential.password_hash, current_password):
        raise WrongCurrentPassword()
    passwords.check_policy(new_password, email=user.email)
    credential.password_hash = await passwords.hash_password(settings, new_password)
    credential.updated_at = utcnow()
    await AccessTokenRepository(session, company_id).revoke_all_of(user.id, at=utcnow())
    await session.flush()


async def revoke_all(session: AsyncSession, *, company_id: int, user_id: int) -> int:
    """Revoke every live token of the user (for a merchant disabling a user)."""
    return await AccessTokenRepository(session, company_id).revoke_all_of(user_id, at=utcnow())


async def start_own_kyc(
    session: AsyncSession,
    providers: Providers,
    *,
    user: User,
    questionnaire: KycQuestionnaire,
    date_of_birth: date,
    country: str,
    base_url: str,
) -> KycSession:
    """The simple user's own hosted verification link: its birth date and country are set
    first (a simple user gave neither), then the KYC service's hosted link is made as for
    any user (its rules: one method per user, 409 once approved or rejected)."""
    await users.complete_identity(
        session,
        company_id=user.company_id,
        user_id=user.id,
        date_of_birth=date_of_birth,
        country=country,
    )
    return await kyc.start_with_token(
        session,
        providers,
        company_id=user.company_id,
        user_id=user.id,
        method=KycMethod.HOSTED_LINK,
        request=questionnaire,
        base_url=base_url,
    )


async def own_cards(session: AsyncSession, *, user: User) -> list[CardView]:
    """The cards the simple user may read: those the merchant assigned to it (and those it
    holds that were never assigned), as the MOR card assignments decide. The one place that
    decides which cards are the user's."""
    return await assignments.cards_assigned_to(session, user.company_id, user.id)
