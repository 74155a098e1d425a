"""Company provisioning and API key management (operator actions, via the CLI)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.auth import repository as api_keys_repository
from finplat.auth.api_keys import display_prefix, hash_api_key, new_api_key, new_webhook_secret
from finplat.auth.models import ApiKey
from finplat.companies import repository
from finplat.companies.models import Company
from finplat.errors import NotFound, ValidationFailed
from finplat.events import service as events
from finplat.events.destinations import check_webhook_url
from finplat.sealing.engines import keyring_of
from finplat.tiers import service as tiers

RESEAL_BATCH = 500


@dataclass(frozen=True)
class IssuedKey:
    key_id: int
    api_key: str  # the only time the plain key exists


@dataclass(frozen=True)
class CreatedCompany:
    company: Company
    key: IssuedKey
    webhook_secret: str


class CompanyNotFound(NotFound):
    code = "COMPANY_NOT_FOUND"
    message = "No company with that id."


async def create_company(
    session: AsyncSession,
    *,
    name: str,
    is_mor: bool = False,
    webhook_url: str | None = None,
    sandbox: bool,
    allow_loopback_webhooks: bool = False,
) -> CreatedCompany:
    """Create a company with its first API key, a webhook secret and the default tiers."""
    name = name.strip()
    if not name or len(name) > 200:
        raise ValidationFailed(
            "The company name must be 1 to 200 characters.",
            validation_errors={"Name": ["Must be 1 to 200 characters."]},
        )
    secret = new_webhook_secret()
    company = await repository.add(
        session,
        Company(
            name=name,
            is_mor=is_mor,
            webhook_url=await check_webhook_url(webhook_url, allow_loopback=allow_loopback_webhooks)
            if webhook_url
            else None,
            webhook_secret=secret,
        ),
    )
    key = await issue_api_key(session, company_id=company.id, sandbox=sandbox)
    await tiers.create_default_tiers(session, company_id=company.id)
    return CreatedCompany(company=company, key=key, webhook_secret=secret)


async def issue_api_key(session: AsyncSession, *, company_id: int, sandbox: bool) -> IssuedKey:
    if await repository.get(session, company_id) is None:
        raise CompanyNotFound()
    plain = new_api_key(sandbox=sandbox)
    key = ApiKey(
        company_id=company_id, display_prefix=display_prefix(plain), key_hash=hash_api_key(plain)
    )
    session.add(key)
    await session.flush()
    return IssuedKey(key_id=key.id, api_key=plain)


async def rotate_api_key(
    session: AsyncSession, *, company_id: int, sandbox: bool, revoke_others: bool
) -> tuple[IssuedKey, int]:
    """Issue a new key; optionally revoke every other key of the company at the same moment.

    Returns the new key and how many keys were revoked. Rotations of one company run one at a
    time (under the company's row lock), so of parallel rotations revoking the others only the
    last one's key stays.
    """
    if await repository.get(session, company_id, lock=True) is None:
        raise CompanyNotFound()
    issued = await issue_api_key(session, company_id=company_id, sandbox=sandbox)
    revoked = 0
    if revoke_others:
        revoked = await api_keys_repository.revoke_all_except(
            session, company_id=company_id, keep_key_id=issued.key_id
        )
    return issued, revoked


class ApiKeyNotFound(NotFound):
    code = "API_KEY_NOT_FOUND"
    message = "No active API key with that id for this company."


async def revoke_api_key(session: AsyncSession, *, company_id: int, key_id: int) -> None:
    if not await api_keys_repository.revoke(session, company_id=company_id, key_id=key_id):
        raise ApiKeyNotFound()


async def list_api_keys(session: AsyncSession, *, company_id: int) -> list[ApiKey]:
    if await repository.get(session, company_id) is None:
        raise CompanyNotFound()
    return await api_keys_repository.list_for_company(session, company_id)


async def get_company(session: AsyncSession, *, company_id: int) -> Company:
    company = await repository.get(session, company_id)
    if company is None:
        raise CompanyNotFound()
    return company


async def set_mor(session: AsyncSession, *, company_id: int, enabled: bool) -> Company:
    """Enable or disable Merchant-of-Record for a company: every `/api/v2/mor/public` route
    answers 403 to a company that is not enabled (authentication rule 5)."""
    company = await repository.get(session, company_id, lock=True)
    if company is None:
        raise CompanyNotFound()
    company.is_mor = enabled
    await session.flush()
    return company


async def update_configuration(
    session: AsyncSession,
    *,
    company_id: int,
    webhook_url: str | None,
    change_url: bool,
    rotate_secret: bool,
    allow_loopback: bool,
    default_card_provider: str | None = None,
) -> tuple[Company, str | None]:
    """Change the webhook URL (validated: public addresses only, loopback in development)
    and/or rotate the webhook secret. Returns the company and the new secret, if rotated;
    the secret is shown only in this response. Setting a URL re-enables an endpoint that a
    410 disabled. `default_card_provider`, when given, is the provider new users' card
    accounts are opened with after identity verification."""
    company = await get_company(session, company_id=company_id)
    if default_card_provider is not None:
        company.default_card_provider = default_card_provider
    if change_url:
        if webhook_url is None:
            company.webhook_url = None
        else:
            company.webhook_url = await check_webhook_url(
                webhook_url, allow_loopback=allow_loopback
            )
        company.webhook_disabled_at = None
    new_secret = None
    if rotate_secret:
        new_secret = new_webhook_secret()
        company.webhook_secret = new_secret
    await session.flush()
    events.forget_endpoint(session, company_id)
    return company, new_secret


async def reseal_secrets(session: AsyncSession) -> int:
    """Seal again, with the current `FINPLAT_SECRET_KEY`, the webhook secrets a previous key
    sealed (a batch per call), so that after a rotation the previous key can be retired."""
    return await repository.reseal_webhook_secrets(
        session, current_prefix=keyring_of(session).current_prefix, limit=RESEAL_BATCH
    )
