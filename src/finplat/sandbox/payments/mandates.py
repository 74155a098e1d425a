"""Sandbox: the account holder decides a mandate at the banking provider, and a pending
collection settles; each reaches the platform as the provider's callback, delivered at once."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.errors import Conflict
from finplat.payments.collections import service as collections
from finplat.payments.collections.service import Collected
from finplat.payments.mandates import service as mandates
from finplat.payments.mandates.models import PaymentMandate
from finplat.providers.banking.port import (
    CollectionFailure,
    ProviderCollectionStatus,
    SandboxMandateSimulation,
)
from finplat.providers.calls import commit_then_call
from finplat.providers.names import BankProvider
from finplat.providers.registry import Providers, configured
from finplat.providers.sandbox import delivery as sandbox_delivery

PROVIDER = BankProvider.BANKPROV.value


def _simulator(providers: Providers) -> SandboxMandateSimulation:
    banking = configured(providers.banking, "No banking provider is configured.")
    if not isinstance(banking, SandboxMandateSimulation):
        raise Conflict("The banking provider cannot simulate mandates.")
    return banking


async def decide(
    session: AsyncSession,
    providers: Providers,
    factory: async_sessionmaker[AsyncSession],
    *,
    secret: str,
    company_id: int,
    mandate_id: str,
    approve: bool,
) -> PaymentMandate:
    mandate = await mandates.get(session, company_id=company_id, mandate_id=mandate_id)
    simulator = _simulator(providers)
    provider_mandate_id = mandate.provider_mandate_id
    await commit_then_call(
        session,
        providers.policy,
        provider=PROVIDER,
        operation="decide_mandate",
        call=lambda: simulator.decide_mandate(
            company_id=company_id, mandate_id=provider_mandate_id, approve=approve
        ),
        idempotent=False,
    )
    await sandbox_delivery.deliver_due(factory, secret=secret, company_id=company_id)
    return await mandates.get(session, company_id=company_id, mandate_id=mandate_id, fresh=True)


async def settle_collection(
    session: AsyncSession,
    providers: Providers,
    factory: async_sessionmaker[AsyncSession],
    *,
    secret: str,
    company_id: int,
    collection_id: str,
    status: ProviderCollectionStatus,
    reason: CollectionFailure | None,
) -> Collected:
    collected = await collections.get(session, company_id=company_id, collection_id=collection_id)
    provider_collection_id = collected.transaction.provider_reference
    if provider_collection_id is None:
        raise Conflict(
            "The provider never answered for this collection; reconciliation settles it.",
            code="PROVIDER_COLLECTION_UNKNOWN",
        )
    simulator = _simulator(providers)
    await commit_then_call(
        session,
        providers.policy,
        provider=PROVIDER,
        operation="settle_collection",
        call=lambda: simulator.settle_collection(
            company_id=company_id,
            collection_id=provider_collection_id,
            status=status,
            reason=reason,
        ),
        idempotent=False,
    )
    await sandbox_delivery.deliver_due(factory, secret=secret, company_id=company_id)
    return await collections.get(session, company_id=company_id, collection_id=collection_id)
