"""`PartnerHosted` on the company's configuration: set, replace or remove it.

The partner's `ApiKey` is sealed at rest (`finplat.sealing`, as webhook secrets are) and never
shown again: the configuration answers its last four characters. `BaseUrl` passes the checks a
webhook URL passes (http(s), a host name resolving to public addresses only; loopback in
development), and every call connects only to the addresses checked just before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.errors import ValidationFailed
from finplat.events.destinations import WebhookDestinationRefused, check_webhook_url
from finplat.partner_hosted import repository
from finplat.partner_hosted.models import PartnerHostedConfig
from finplat.partner_hosted.repository import PartnerHostedConfigRepository
from finplat.sealing.engines import keyring_of

MAX_TIMEOUT_MS = 2000  # the card networks' budget for an issuer's answer
DEFAULT_TIMEOUT_MS = 1500


class FallbackDecision(StrEnum):
    APPROVE = "APPROVE"
    DECLINE = "DECLINE"


@dataclass(frozen=True)
class PartnerHostedChange:
    base_url: str
    api_key: str | None  # None keeps the stored key
    timeout_ms: int
    fallback_decision: FallbackDecision


class PartnerApiKeyRequired(ValidationFailed):
    code = "VALIDATION_ERROR"
    message = "PartnerHosted.ApiKey is required the first time partner-hosted balances are set."


async def current(session: AsyncSession, *, company_id: int) -> PartnerHostedConfig | None:
    return await PartnerHostedConfigRepository(session, company_id).current()


async def configure(
    session: AsyncSession,
    *,
    company_id: int,
    change: PartnerHostedChange | None,
    allow_loopback: bool,
) -> PartnerHostedConfig | None:
    """Set (or, with None, remove) the company's partner-hosted configuration."""
    configs = PartnerHostedConfigRepository(session, company_id)
    existing = await configs.current()
    if change is None:
        if existing is not None:
            await session.delete(existing)
            await session.flush()
        return None
    try:
        base_url = await check_webhook_url(
            change.base_url.rstrip("/"), allow_loopback=allow_loopback
        )
    except WebhookDestinationRefused as refused:
        reasons = refused.validation_errors or {}
        raise ValidationFailed(
            refused.message.replace("webhook URL", "partner's BaseUrl"),
            validation_errors={"PartnerHosted.BaseUrl": next(iter(reasons.values()), [])},
        ) from None
    if change.api_key is None and existing is None:
        raise PartnerApiKeyRequired(validation_errors={"PartnerHosted.ApiKey": ["Required."]})
    config = existing or PartnerHostedConfig()
    config.base_url = base_url
    if change.api_key is not None:
        config.api_key = change.api_key
        config.api_key_last4 = change.api_key[-4:]
    config.timeout_ms = change.timeout_ms
    config.fallback_decision = change.fallback_decision.value
    if existing is None:
        await configs.add(config)
    await session.flush()
    return config


async def reseal_api_keys(session: AsyncSession, *, limit: int = 500) -> int:
    """Seal again, with the current `FINPLAT_SECRET_KEY`, the partner keys a previous key
    sealed (a batch per call), as the webhook secrets are."""
    return await repository.reseal_api_keys(
        session, current_prefix=keyring_of(session).current_prefix, limit=limit
    )
