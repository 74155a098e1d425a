"""Callbacks from the verification and account providers that move KYC and provider states."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.kyc.review import apply_review
from finplat.providers import inbound
from finplat.providers.cards.port import ACCOUNT_REVIEWED
from finplat.providers.identity.port import APPLICANT_REVIEWED
from finplat.providers.names import BankProvider, ExternalProvider
from finplat.provisioning import service as provider_accounts
from finplat.provisioning import statuses as ps

inbound.handler(ExternalProvider.IDENTITY.value, APPLICANT_REVIEWED)(apply_review)


async def _account_reviewed(
    provider: BankProvider, session: AsyncSession, company_id: int, data: dict[str, Any]
) -> None:
    account = await provider_accounts.by_provider_account(
        session, company_id=company_id, provider=provider, account_id=str(data["accountId"])
    )
    if account is None:
        return
    status = ps.APPROVED if data["status"] == "ACTIVE" else ps.REJECTED
    await provider_accounts.set_status(
        session,
        company_id=company_id,
        user_id=account.user_id,
        provider=provider,
        status=status,
    )


@inbound.handler(ExternalProvider.CARDPROV.value, ACCOUNT_REVIEWED)
async def cardprov_account_reviewed(
    session: AsyncSession, company_id: int, data: dict[str, Any]
) -> None:
    await _account_reviewed(BankProvider.CARDPROV, session, company_id, data)


@inbound.handler(ExternalProvider.SWITCHPROV.value, ACCOUNT_REVIEWED)
async def switchprov_account_reviewed(
    session: AsyncSession, company_id: int, data: dict[str, Any]
) -> None:
    await _account_reviewed(BankProvider.SWITCHPROV, session, company_id, data)
