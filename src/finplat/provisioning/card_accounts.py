"""Provisioning the user's card-provider account and switch-provider link.

Rules (spec, "States and transitions" and rules 4-5):
* Card-provider account: after base KYC approval, for users of companies whose default card
  provider is `cardprov` (done by the provisioning job right after approval);
  `POST /api/v2/users/create-cardprov-account/{userId}` is an idempotent repair.
* Switch-provider link: created lazily with the first switch-provider card, after approval,
  when the user's tier offers a switch-provider product.
Both are idempotent at the provider (the reference is fixed per user and provider), so a
retry after a timeout finds the account the first call opened.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.errors import ApiError, Conflict
from finplat.kyc.approval import require_base_approval
from finplat.providers.calls import commit_then_call
from finplat.providers.cards.port import Cardholder, HolderAccount
from finplat.providers.names import BankProvider
from finplat.providers.registry import Providers, configured
from finplat.provisioning import repository, service, statuses
from finplat.provisioning.holders import cardholder
from finplat.provisioning.models import ProviderAccount
from finplat.provisioning.selection import selected_providers
from finplat.users.models import User

log = structlog.get_logger("finplat.provisioning")

# Reason on a card-provider account waiting for the provisioning job.
AWAITING_PROVISIONING = "awaiting provisioning"
_PROVIDER_STATUS = {
    "ACTIVE": statuses.APPROVED,
    "PENDING": statuses.PENDING,
    "REJECTED": statuses.REJECTED,
}


class ProviderNotSelected(Conflict):
    code = "PROVIDER_NOT_SELECTED"
    message = "The user's tier and company do not use this provider."


class ProviderAccountRejected(Conflict):
    code = "PROVIDER_ACCOUNT_REJECTED"
    message = "The provider rejected this user; no account can be opened."


@dataclass(frozen=True)
class Provisioned:
    account: ProviderAccount
    created: bool


async def provision_card_account(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    offered_to: User | None = None,
) -> Provisioned:
    """Open the user's card-provider account once; an existing one is returned as it is.
    `offered_to`: the user, when the caller has checked their base approval and orders a
    card product of their tier (`_provision`)."""
    return await _provision(
        session,
        providers,
        company_id=company_id,
        user_id=user_id,
        provider=BankProvider.CARDPROV,
        offered_to=offered_to,
    )


async def ensure_switch_link(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    offered_to: User | None = None,
) -> Provisioned:
    """The switch-provider link, created with the user's first switch-provider card
    (`offered_to` as `provision_card_account`'s)."""
    return await _provision(
        session,
        providers,
        company_id=company_id,
        user_id=user_id,
        provider=BankProvider.SWITCHPROV,
        offered_to=offered_to,
    )


async def _provision(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    provider: BankProvider,
    offered_to: User | None = None,
) -> Provisioned:
    """The account is opened for a user whose base KYC is approved, at a provider their tier
    and company use (`selection.selected_providers`). A card order has checked the approval,
    and the product it orders is one of the user's tier, whose provider the tier therefore
    uses: it hands the user over (`offered_to`) and neither is read again."""
    user = offered_to
    if user is None:
        user = await require_base_approval(session, company_id=company_id, user_id=user_id)
        if provider not in await selected_providers(session, user):
            raise ProviderNotSelected(f"The user's tier and company do not use {provider.value}.")
    existing = await service.find(
        session, company_id=company_id, user_id=user_id, provider=provider
    )
    if existing is not None and existing.provider_account_id is not None:
        return Provisioned(existing, created=False)
    if existing is not None and existing.status == statuses.REJECTED:
        raise ProviderAccountRejected()
    holder = await cardholder(session, providers, user, provider)
    opened = await _open(session, providers, company_id, provider, holder)
    account = await service.set_status(
        session,
        company_id=company_id,
        user_id=user_id,
        provider=provider,
        status=_PROVIDER_STATUS.get(opened.status, statuses.PENDING),
        provider_account_id=opened.account_id,
    )
    return Provisioned(account, created=True)


async def _open(
    session: AsyncSession,
    providers: Providers,
    company_id: int,
    provider: BankProvider,
    holder: Cardholder,
) -> HolderAccount:
    open_account: Callable[..., Awaitable[HolderAccount]]
    if provider is BankProvider.CARDPROV:
        operation = "create_account"
        open_account = configured(
            providers.cardprov, "No card provider is configured."
        ).create_account
    else:
        operation = "create_link"
        open_account = configured(
            providers.switchprov, "No switch provider is configured."
        ).create_link
    return await commit_then_call(
        session,
        providers.policy,
        provider=provider.value,
        operation=operation,
        call=lambda: open_account(company_id=company_id, holder=holder),
        idempotent=True,
    )


async def provision_waiting(
    factory: async_sessionmaker[AsyncSession],
    providers: Providers,
    *,
    company_id: int | None = None,
) -> int:
    """Open the card-provider accounts waiting since approval; returns how many opened. A
    failure leaves the account waiting for the next round (or the repair endpoint)."""
    async with unit_of_work(factory) as session:
        waiting = await repository.awaiting_account(
            session,
            provider=BankProvider.CARDPROV.value,
            reason=AWAITING_PROVISIONING,
            company_id=company_id,
            limit=50,
        )
    opened = 0
    for owner, user_id in waiting:
        try:
            async with unit_of_work(factory) as session:
                bind_company(session, owner)
                await provision_card_account(session, providers, company_id=owner, user_id=user_id)
            opened += 1
        except ApiError as error:
            log.warning("provisioning_deferred", provider="cardprov", code=error.code)
    return opened
