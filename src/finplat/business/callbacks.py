"""The banking provider's business-onboarding callbacks.

* `person.created`: a person the platform added to an application exists at the provider.
  Accepted in the canonical shape `{personId, email}` and in the provider's own
  `{id, primaryEmailAddress}`; emits the platform's `person.created` (domain `person`,
  provider `bankprov`) with canonical `data.personId` (the person's `Id` in this API) and
  `data.email`, once per person.
* `application.status_changed`: the review moved on; a late or repeated callback never moves
  an application backwards. approved opens the business's banking account (the application's
  `accountId`, provider approval `approved`); rejected and more_information_required set the
  provider approval to `rejected` and `pending_documents`. Each emits `account.status_updated`.
  An application that is a MOR merchant's own KYB goes to `mor.kyb.service` instead.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import structlog
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.business import statuses
from finplat.business.repository import ApplicationRepository, PersonRepository
from finplat.errors import Conflict
from finplat.events import service as events
from finplat.kit.clock import utcnow
from finplat.kit.fields import SafeText
from finplat.mor.kyb import service as mor_kyb
from finplat.providers import inbound
from finplat.providers.business_onboarding.sandbox.adapter import (
    APPLICATION_STATUS_CHANGED,
    PERSON_CREATED,
)
from finplat.providers.names import BankProvider, ExternalProvider
from finplat.provisioning import service as provider_accounts
from finplat.provisioning import statuses as provider_statuses

BANKPROV = ExternalProvider.BANKPROV.value
log = structlog.get_logger("finplat.business.callbacks")
# A person.created callback about a person not yet recorded here is retried for this long (the
# platform writes the person just after the provider answers); after that it is dropped.
UNKNOWN_PERSON_RETRY_WINDOW = timedelta(hours=1)
MAX_REASON = 200
MAX_MOR_REASON = 500

_PROVIDER_STATUS = {
    statuses.APPROVED: provider_statuses.APPROVED_BANKPROV,
    statuses.REJECTED: provider_statuses.REJECTED_BANKPROV,
    statuses.MORE_INFORMATION_REQUIRED: provider_statuses.PENDING_DOCUMENTS,
}


class ReportedAccount(BaseModel):
    """The `accountId` of `application.status_changed`, as the application keeps it
    (VARCHAR(40)): anything else is 400 `MALFORMED_CALLBACK`, before anything is written."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    accountId: Annotated[SafeText, Field(max_length=40)] | None = None


class PersonNotYetKnown(Conflict):
    """Refuses the callback for now, so that the provider sends it again."""

    code = "PERSON_NOT_YET_KNOWN"
    message = "The person is not recorded yet; send the callback again later."


def _text(data: dict[str, Any], *names: str) -> str:
    """The first of `names` present: the canonical name first, then the provider's."""
    for name in names:
        value = data.get(name)
        if value is not None:
            if not isinstance(value, str | int) or isinstance(value, bool):
                raise TypeError(name)
            return str(value)
    raise KeyError(names[0])


def _sent_at(data: dict[str, Any]) -> datetime | None:
    value = data.get("createdAt")
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


@inbound.handler(BANKPROV, PERSON_CREATED)
async def person_created(session: AsyncSession, company_id: int, data: dict[str, Any]) -> None:
    provider_person_id = _text(data, "personId", "id")
    email = _text(data, "email", "primaryEmailAddress")
    person = await PersonRepository(session, company_id).by_provider_id(provider_person_id)
    if person is None:
        sent_at = _sent_at(data)
        if sent_at is not None and utcnow() - sent_at > UNKNOWN_PERSON_RETRY_WINDOW:
            log.info("business_person_unknown", provider=BANKPROV)
            return
        raise PersonNotYetKnown()
    if person.announced_at is not None:
        return
    person.announced_at = utcnow()
    await session.flush()
    await events.record(
        session,
        company_id=company_id,
        type_=PERSON_CREATED,
        domain="person",
        provider=BANKPROV,
        data={
            "personId": person.id,
            "email": email,
            "applicationId": person.application_id,
            "role": person.role,
        },
    )


@inbound.handler(BANKPROV, APPLICATION_STATUS_CHANGED)
async def application_status_changed(
    session: AsyncSession, company_id: int, data: dict[str, Any]
) -> None:
    provider_application_id = _text(data, "applicationId")
    status = _text(data, "status")
    account_id = ReportedAccount.model_validate(data).accountId
    application = await ApplicationRepository(session, company_id).by_provider_id(
        provider_application_id, lock=True
    )
    if application is None:
        # Not a business user's application: it may be a MOR merchant's own KYB.
        reason = data.get("reason")
        asked = data.get("requiredInformation")
        if isinstance(asked, list):
            reason = " ".join(str(item) for item in asked)
        if not await mor_kyb.apply_provider_status(
            session,
            company_id=company_id,
            provider_application_id=provider_application_id,
            provider_status=status,
            reason=reason[:MAX_MOR_REASON] if isinstance(reason, str) else None,
        ):
            log.info("business_application_unknown", provider=BANKPROV)
        return
    allowed_from = statuses.ALLOWED_FROM.get(status)
    if allowed_from is None or application.status not in allowed_from:
        log.info("business_application_status_ignored", current=application.status, reported=status)
        return
    application.status = status
    application.updated_at = utcnow()
    if status == statuses.APPROVED:
        if account_id is None:
            raise KeyError("accountId")
        application.account_id = account_id
    await session.flush()
    provider_status = _PROVIDER_STATUS.get(status)
    if provider_status is None:
        return
    reason = data.get("reason")
    if status == statuses.MORE_INFORMATION_REQUIRED:
        reason = "The banking provider needs more information about the business."
    await provider_accounts.set_status(
        session,
        company_id=company_id,
        user_id=application.user_id,
        provider=BankProvider.BANKPROV,
        status=provider_status,
        provider_account_id=account_id,
        reason=reason[:MAX_REASON] if isinstance(reason, str) else None,
    )
