"""Mandates: a user authorises the company to collect from one of their budgets.

Rules:
* Create: the user's budget (`BudgetId`, or the user's default budget) must hold `Currency`
  (409 `CURRENCY_NOT_IN_BUDGET`); `StartDate` (default today) is today or later and `EndDate`,
  when given, is on or after it (400). The mandate is registered at the banking provider
  (keyed by the call's Idempotency-Key) and recorded `PENDING`; event `mandate.created`.
* The provider authorises it asynchronously (`mandate.status_changed`): `ACTIVE` (event
  `mandate.activated`) or `FAILED` (event `mandate.failed`).
* Cancel: a `PENDING` or `ACTIVE` mandate is cancelled at the provider first (no collection
  is accepted afterwards), then here; event `mandate.cancelled`. Any other status is 409
  `MANDATE_NOT_CANCELLABLE`.
* A `PENDING` or `ACTIVE` mandate whose `EndDate` has passed is `EXPIRED` (event
  `mandate.expired`), stored when it is next read.
* `MaxAmount` is the most collected per period of `Frequency` (for `ONE_TIME`: one
  collection, at most `MaxAmount`); `RemainingThisPeriod` is what the current period still
  allows (see `allowance`).
* Another company's mandate answers like one that does not exist (404 `MANDATE_NOT_FOUND`).
"""

from __future__ import annotations

import secrets
from datetime import date
from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking import accounts
from finplat.errors import Conflict, NotFound, ValidationFailed
from finplat.events import service as events
from finplat.idempotency.service import Claim
from finplat.kit.clock import today, utcnow
from finplat.kit.money import Money, from_minor
from finplat.kit.pagination import PageRequest, PageSlice
from finplat.payments.budgets import user_budget
from finplat.payments.collections.repository import CollectionRepository
from finplat.payments.mandates import allowance
from finplat.payments.mandates.models import (
    FINAL_MANDATE_STATUSES,
    MandateFrequencyV2,
    MandateStatusV2,
    PaymentMandate,
)
from finplat.payments.mandates.repository import MandateRepository
from finplat.providers.banking.port import ProviderMandate, ProviderMandateStatus
from finplat.providers.calls import commit_then_call
from finplat.providers.names import BankProvider
from finplat.providers.registry import Providers, configured
from finplat.users import service as users

log = structlog.get_logger("finplat.payments.mandates")

PROVIDER = BankProvider.BANKPROV.value
NO_BANKING = "No banking provider is configured."
MANDATE_ID_PATTERN = r"^mdt_[0-9a-f]{24}$"
EVENT_DOMAIN = "mandate"


class MandateNotFound(NotFound):
    code = "MANDATE_NOT_FOUND"
    message = "No mandate with that id."


class MandateNotCancellable(Conflict):
    code = "MANDATE_NOT_CANCELLABLE"
    message = "Only a pending or active mandate can be cancelled."


def new_mandate_id() -> str:
    return f"mdt_{secrets.token_hex(12)}"


def check_dates(start: date | None, end: date | None, on: date) -> date:
    start = start or on
    if start < on:
        raise ValidationFailed(
            "`StartDate` cannot be in the past.",
            validation_errors={"StartDate": ["Today or later."]},
        )
    if end is not None and end < start:
        raise ValidationFailed(
            "`EndDate` is before `StartDate`.",
            validation_errors={"EndDate": ["On or after StartDate."]},
        )
    return start


async def create(
    session: AsyncSession,
    providers: Providers,
    *,
    claim: Claim,
    company_id: int,
    user_id: int,
    max_amount: Money,
    frequency: MandateFrequencyV2,
    description: str | None,
    external_reference_id: str | None,
    start_date: date | None,
    end_date: date | None,
    budget_id: str | None,
) -> PaymentMandate:
    """Register the mandate at the provider, then record it `PENDING`."""
    banking = configured(providers.banking, NO_BANKING)
    await users.get_user(session, company_id=company_id, user_id=user_id)
    start = check_dates(start_date, end_date, today())
    budget = await user_budget(
        session, providers, company_id=company_id, user_id=user_id, budget_id=budget_id
    )
    await accounts.budget_balance(
        session, company_id=company_id, budget=budget, currency=max_amount.currency
    )
    provider_budget_id, platform_budget_id = budget.provider_budget_id, budget.id
    key = claim.derived_key("create-mandate")
    registered: ProviderMandate = await commit_then_call(
        session,
        providers.policy,
        provider=PROVIDER,
        operation="create_mandate",
        call=lambda: banking.create_mandate(
            company_id=company_id,
            idempotency_key=key,
            budget_id=provider_budget_id,
            currency=max_amount.currency,
            max_amount_minor=max_amount.minor,
            end_date=end_date,
        ),
        idempotent=True,
    )
    mandate = await MandateRepository(session, company_id).add(
        PaymentMandate(
            id=new_mandate_id(),
            user_id=user_id,
            budget_id=platform_budget_id,
            currency=max_amount.currency,
            max_amount_minor=max_amount.minor,
            frequency=frequency.value,
            status=MandateStatusV2.PENDING.value,
            description=description,
            external_reference_id=external_reference_id,
            start_date=start,
            end_date=end_date,
            provider=PROVIDER,
            provider_mandate_id=registered.mandate_id,
        )
    )
    await event(session, mandate, "mandate.created")
    return mandate


async def get(
    session: AsyncSession, *, company_id: int, mandate_id: str, fresh: bool = False
) -> PaymentMandate:
    """The mandate, expired first if its `EndDate` has passed (404 for another company's)."""
    mandate = await MandateRepository(session, company_id).find(mandate_id, fresh=fresh)
    if mandate is None:
        raise MandateNotFound()
    return await _expire_if_due(session, mandate)


async def locked(session: AsyncSession, *, company_id: int, mandate_id: str) -> PaymentMandate:
    """The mandate row locked (collections serialise on it), expired first if due."""
    mandate = await MandateRepository(session, company_id).find(mandate_id, lock=True)
    if mandate is None:
        raise MandateNotFound()
    await _expire_locked(session, mandate)
    return mandate


async def page(
    session: AsyncSession,
    *,
    company_id: int,
    page_request: PageRequest,
    user_id: int | None,
    status: MandateStatusV2 | None,
) -> PageSlice[PaymentMandate]:
    if user_id is not None:
        await users.get_user(session, company_id=company_id, user_id=user_id)
    found = await MandateRepository(session, company_id).page(
        page_request, user_id=user_id, status=status
    )
    rows = [await _expire_if_due(session, row) for row in found.rows]
    return PageSlice(rows=rows, has_more=found.has_more)


async def remaining_this_period(session: AsyncSession, mandate: PaymentMandate) -> int:
    """What can still be collected now: 0 unless `ACTIVE`; for a one-time mandate, 0 once a
    collection is pending or completed."""
    if mandate.status != MandateStatusV2.ACTIVE.value:
        return 0
    frequency = MandateFrequencyV2(mandate.frequency)
    if frequency is MandateFrequencyV2.ONE_TIME:
        used = await CollectionRepository(session, mandate.company_id).holding(mandate.id)
        if used:
            return 0
    return await allowance.left(session, mandate, allowance.period_of(frequency, today()))


async def cancel(
    session: AsyncSession, providers: Providers, *, company_id: int, mandate_id: str
) -> PaymentMandate:
    banking = configured(providers.banking, NO_BANKING)
    mandate = await get(session, company_id=company_id, mandate_id=mandate_id)
    _require_cancellable(mandate)
    provider_mandate_id = mandate.provider_mandate_id
    answer = await commit_then_call(
        session,
        providers.policy,
        provider=PROVIDER,
        operation="cancel_mandate",
        call=lambda: banking.cancel_mandate(company_id=company_id, mandate_id=provider_mandate_id),
        idempotent=True,
    )
    mandate = await locked(session, company_id=company_id, mandate_id=mandate_id)
    if mandate.status == MandateStatusV2.CANCELLED.value:
        return mandate  # a parallel cancel won; the answer is the same
    _require_cancellable(mandate)
    if answer.status is not ProviderMandateStatus.CANCELLED:
        raise MandateNotCancellable(f"The provider reports the mandate {answer.status.value}.")
    now = utcnow()
    mandate.status = MandateStatusV2.CANCELLED.value
    mandate.cancelled_at = now
    mandate.updated_at = now
    await session.flush()
    await event(session, mandate, "mandate.cancelled")
    return mandate


async def refresh(
    session: AsyncSession, providers: Providers, *, company_id: int, mandate_id: str
) -> PaymentMandate:
    """Ask the provider about a pending mandate and apply its decision (reconciliation: a
    lost `mandate.status_changed` callback still activates or fails it)."""
    banking = configured(providers.banking, NO_BANKING)
    mandate = await get(session, company_id=company_id, mandate_id=mandate_id)
    if mandate.status != MandateStatusV2.PENDING.value:
        return mandate
    provider_mandate_id = mandate.provider_mandate_id
    answer = await commit_then_call(
        session,
        providers.policy,
        provider=PROVIDER,
        operation="mandate_status",
        call=lambda: banking.mandate(company_id=company_id, mandate_id=provider_mandate_id),
        idempotent=True,
    )
    if answer.status is not ProviderMandateStatus.PENDING:
        await apply_provider_status(
            session,
            company_id=company_id,
            provider_mandate_id=provider_mandate_id,
            status=answer.status,
            reason=answer.reason,
        )
    return await get(session, company_id=company_id, mandate_id=mandate_id, fresh=True)


async def apply_provider_status(
    session: AsyncSession,
    *,
    company_id: int,
    provider_mandate_id: str,
    status: ProviderMandateStatus,
    reason: str | None,
) -> PaymentMandate | None:
    """The provider decided a pending mandate (`ACTIVE` or `FAILED`) or cancelled it. A
    final mandate is not changed again; None when the platform has no such mandate."""
    mandate = await MandateRepository(session, company_id).by_provider_mandate(
        PROVIDER, provider_mandate_id, lock=True
    )
    if mandate is None:
        log.warning("status_for_unknown_mandate")
        return None
    current = MandateStatusV2(mandate.status)
    if current in FINAL_MANDATE_STATUSES:
        return mandate
    now = utcnow()
    if status is ProviderMandateStatus.ACTIVE and current is MandateStatusV2.PENDING:
        mandate.status = MandateStatusV2.ACTIVE.value
        mandate.activated_at = now
        type_ = "mandate.activated"
    elif status is ProviderMandateStatus.FAILED and current is MandateStatusV2.PENDING:
        mandate.status = MandateStatusV2.FAILED.value
        mandate.failure_reason = reason or "AUTHORISATION_REFUSED"
        type_ = "mandate.failed"
    elif status is ProviderMandateStatus.CANCELLED:
        mandate.status = MandateStatusV2.CANCELLED.value
        mandate.cancelled_at = now
        type_ = "mandate.cancelled"
    else:
        return mandate
    mandate.updated_at = now
    await session.flush()
    await event(session, mandate, type_)
    return mandate


async def _expire_if_due(session: AsyncSession, mandate: PaymentMandate) -> PaymentMandate:
    if not _past_end(mandate):
        return mandate
    return await locked(session, company_id=mandate.company_id, mandate_id=mandate.id)


def _past_end(mandate: PaymentMandate) -> bool:
    return (
        mandate.status in (MandateStatusV2.PENDING.value, MandateStatusV2.ACTIVE.value)
        and mandate.end_date is not None
        and today() > mandate.end_date
    )


async def _expire_locked(session: AsyncSession, mandate: PaymentMandate) -> None:
    if not _past_end(mandate):
        return
    mandate.status = MandateStatusV2.EXPIRED.value
    mandate.updated_at = utcnow()
    await session.flush()
    await event(session, mandate, "mandate.expired")


def _require_cancellable(mandate: PaymentMandate) -> None:
    if mandate.status not in (MandateStatusV2.PENDING.value, MandateStatusV2.ACTIVE.value):
        raise MandateNotCancellable(f"The mandate is {mandate.status}.")


async def event(session: AsyncSession, mandate: PaymentMandate, type_: str) -> None:
    data: dict[str, Any] = {
        "mandateId": mandate.id,
        "userId": mandate.user_id,
        "status": mandate.status,
        "frequency": mandate.frequency,
        "maxAmount": from_minor(mandate.max_amount_minor, mandate.currency),
        "currency": mandate.currency,
        "externalReferenceId": mandate.external_reference_id,
        "reason": mandate.failure_reason,
    }
    await events.record(
        session,
        company_id=mandate.company_id,
        type_=type_,
        domain=EVENT_DOMAIN,
        provider=PROVIDER,
        data=data,
    )
