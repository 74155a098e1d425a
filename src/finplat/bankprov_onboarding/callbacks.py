"""The banking provider's `account.status_changed` callback, for personal onboarding and for
the business application alike: the account is found by the provider's account id."""

from __future__ import annotations

from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.providers import inbound
from finplat.providers.banking_onboarding.port import ACCOUNT_STATUS_CHANGED, AccountStatus
from finplat.providers.names import BankProvider, ExternalProvider
from finplat.provisioning import service as provisioning
from finplat.provisioning import statuses

log = structlog.get_logger("finplat.bankprov_onboarding")

STATUSES = {
    AccountStatus.PENDING: statuses.PENDING,
    AccountStatus.PENDING_DOCUMENTS: statuses.PENDING_DOCUMENTS,
    AccountStatus.ACTIVE: statuses.APPROVED_BANKPROV,
    AccountStatus.REJECTED: statuses.REJECTED_BANKPROV,
}


@inbound.handler(ExternalProvider.BANKPROV.value, ACCOUNT_STATUS_CHANGED)
async def on_account_status_changed(
    session: AsyncSession, company_id: int, data: dict[str, Any]
) -> None:
    account_id = data["accountId"]
    status = STATUSES[AccountStatus(data["status"])]
    reason = data.get("reason")
    if not isinstance(account_id, str) or not (reason is None or isinstance(reason, str)):
        raise TypeError("accountId and reason must be strings")
    account = await provisioning.by_provider_account(
        session, company_id=company_id, provider=BankProvider.BANKPROV, account_id=account_id
    )
    if account is None:
        # Not (or no longer) ours: acknowledged, nothing to apply.
        log.info("bankprov_status_for_unknown_account", status=status)
        return
    await provisioning.set_status(
        session,
        company_id=company_id,
        user_id=account.user_id,
        provider=BankProvider.BANKPROV,
        status=status,
        reason=reason[:200] if reason else None,
    )
