"""The MOR merchant's KYB (spec: `POST /api/v2/mor/public/kyb` submits or resubmits KYB for
the key's MOR merchant), through the banking provider's business onboarding.

Rules:
* One KYB per MOR company. A submission creates the provider's application (or, after
  NEEDS_INFO, completes the same one), replaces its compliance details with the optional
  fields and `UboInformation`, adds each of `Ubos` as a person with the role UBO, and submits
  it: the KYB is then SUBMITTED and `mor.kyb.submitted` is recorded.
* A resubmission is allowed after REJECTED (a new application at the provider: a rejected one
  is closed) or NEEDS_INFO; while SUBMITTED or IN_REVIEW it is 409 `MOR_KYB_PENDING`, once
  APPROVED 409 `MOR_KYB_APPROVED`. A new application needs at least one UBO (409
  `MOR_KYB_UBOS_REQUIRED`: the provider reviews nobody without one).
* Each provider call is made with the transaction committed and a provider key derived from
  the company and the attempt's number, so a retry after a lost answer gets the provider's
  first answer; local state is written only after the provider accepted.
* The review arrives as the provider's `application.status_changed` callbacks (`callbacks`):
  IN_REVIEW, then APPROVED, REJECTED (with its reason) or NEEDS_INFO (with what is asked),
  each recorded as `mor.kyb.<status>` (lower case).
"""

from __future__ import annotations

import json

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.business.markets import infer_market
from finplat.errors import Conflict, NotFound, ServiceUnavailable
from finplat.events import service as events
from finplat.kit.clock import utcnow
from finplat.mor.kyb import statuses
from finplat.mor.kyb.models import MorKyb
from finplat.mor.kyb.repository import MorKybRepository
from finplat.mor.kyb.schemas import MorKybRequest
from finplat.providers.business_onboarding.port import (
    ApplicationDetails,
    BusinessOnboarding,
    BusinessOnboardingSimulation,
    Decision,
    PersonDetails,
)
from finplat.providers.calls import commit_then_call
from finplat.providers.names import ExternalProvider
from finplat.providers.registry import Providers, configured

BANKPROV = ExternalProvider.BANKPROV.value
DOMAIN = "mor"
UBO = "UBO"
BUSINESS_TYPE = "MERCHANT_OF_RECORD"
# The provider onboards businesses in its UK and EU markets; a merchant registered outside
# both is sent under EU (the provider's market for international businesses).
DEFAULT_MARKET = "EU"
# What the merchant sent besides the application's own details: the compliance details.
APPLICATION_FIELDS = frozenset(
    {"CompanyName", "RegistrationNumber", "RegistrationCountry", "Industry", "Website", "Ubos"}
)


class KybPending(Conflict):
    code = "MOR_KYB_PENDING"
    message = "The merchant's KYB is under review; submit again only after REJECTED or NEEDS_INFO."


class KybApproved(Conflict):
    code = "MOR_KYB_APPROVED"
    message = "The merchant's KYB is approved; there is nothing to resubmit."


class UbosRequired(Conflict):
    code = "MOR_KYB_UBOS_REQUIRED"
    message = "A new KYB application needs at least one entry in Ubos."


class KybNotFound(NotFound):
    code = "MOR_KYB_NOT_FOUND"
    message = "The merchant has not submitted KYB yet."


class KybNotInReview(Conflict):
    code = "MOR_KYB_NOT_IN_REVIEW"
    message = "Only a KYB under review can be decided."


def _adapter(providers: Providers) -> BusinessOnboarding:
    return configured(
        providers.business_onboarding,
        "No banking provider is configured for business onboarding.",
    )


def _refuse_unless_resubmittable(kyb: MorKyb | None) -> None:
    if kyb is None:
        return
    if kyb.status == statuses.APPROVED:
        raise KybApproved()
    if kyb.status not in statuses.RESUBMITTABLE:
        raise KybPending()


async def submit(
    session: AsyncSession, providers: Providers, *, company_id: int, data: MorKybRequest
) -> MorKyb:
    """Submit or resubmit the key's MOR merchant's KYB (see the module's rules)."""
    repo = MorKybRepository(session, company_id)
    existing = await repo.current()
    _refuse_unless_resubmittable(existing)
    attempt = (existing.submissions if existing is not None else 0) + 1
    reuse = existing is not None and existing.status == statuses.NEEDS_INFO
    if not reuse and not data.Ubos:
        raise UbosRequired()
    adapter = _adapter(providers)
    if reuse:
        assert existing is not None
        application_id = existing.provider_application_id
    else:
        details = ApplicationDetails(
            market=infer_market(data.RegistrationCountry) or DEFAULT_MARKET,
            business_type=BUSINESS_TYPE,
            registered_name=data.CompanyName,
            registration_number=data.RegistrationNumber,
            country_of_incorporation=data.RegistrationCountry,
            business_overview=data.BusinessDescription,
            industry_main=data.Industry,
            incorporation_date=data.IncorporationDate,
            website=data.Website,
        )
        created = await commit_then_call(
            session,
            providers.policy,
            provider=BANKPROV,
            operation="create_application",
            call=lambda: adapter.create_application(
                company_id=company_id,
                idempotency_key=f"mor-kyb:{company_id}:{attempt}",
                details=details,
            ),
            idempotent=True,
        )
        application_id = created.application_id
    sent = data.model_dump(mode="json", exclude_none=True)
    compliance = {k: v for k, v in sent.items() if k not in APPLICATION_FIELDS}
    await commit_then_call(
        session,
        providers.policy,
        provider=BANKPROV,
        operation="update_compliance",
        call=lambda: adapter.update_compliance(
            company_id=company_id, application_id=application_id, requirements=compliance
        ),
        idempotent=True,
    )
    for ubo in data.Ubos or ():
        person = PersonDetails(
            first_name=ubo.FirstName,
            last_name=ubo.LastName,
            email=ubo.Email,
            role=UBO,
            date_of_birth=ubo.DateOfBirth,
            nationality=ubo.Nationality,
            ownership_percentage=ubo.OwnershipPercentage,
        )
        person_key = f"mor-kyb-ubo:{application_id}:{ubo.Email.casefold()}"
        await commit_then_call(
            session,
            providers.policy,
            provider=BANKPROV,
            operation="add_person",
            call=lambda person=person, key=person_key: adapter.add_person(  # type: ignore[misc]
                company_id=company_id,
                application_id=application_id,
                idempotency_key=key,
                person=person,
            ),
            idempotent=True,
        )
    await commit_then_call(
        session,
        providers.policy,
        provider=BANKPROV,
        operation="submit_application",
        call=lambda: adapter.submit_application(
            company_id=company_id,
            application_id=application_id,
            idempotency_key=f"mor-kyb-submit:{company_id}:{attempt}",
        ),
        idempotent=True,
    )
    return await _record_submission(session, repo, application_id, attempt, sent)


async def _record_submission(
    session: AsyncSession,
    repo: MorKybRepository,
    application_id: str,
    attempt: int,
    sent: dict[str, object],
) -> MorKyb:
    """Write the accepted submission, unless a concurrent request already recorded this
    attempt (its answer is then this one's too)."""
    now = utcnow()
    kyb = await repo.current(lock=True)
    if kyb is not None and kyb.submissions >= attempt:
        return kyb
    if kyb is None:
        try:
            kyb = await repo.add(
                MorKyb(
                    provider_application_id=application_id,
                    status=statuses.SUBMITTED,
                    submissions=attempt,
                    submitted=json.dumps(sent, separators=(",", ":")),
                    submitted_at=now,
                )
            )
        except IntegrityError:
            raise KybPending() from None
    else:
        kyb.provider_application_id = application_id
        kyb.status = statuses.SUBMITTED
        kyb.submissions = attempt
        kyb.submitted = json.dumps(sent, separators=(",", ":"))
        kyb.submitted_at = now
        kyb.reason = None
        kyb.updated_at = now
        await session.flush()
    await _announce(session, kyb)
    return kyb


async def _announce(session: AsyncSession, kyb: MorKyb) -> None:
    await events.record(
        session,
        company_id=kyb.company_id,
        type_=statuses.event_type(kyb.status),
        domain=DOMAIN,
        provider=BANKPROV,
        data={
            "status": kyb.status,
            "submissions": kyb.submissions,
            "reason": kyb.reason,
        },
    )


async def current(session: AsyncSession, *, company_id: int) -> MorKyb:
    kyb = await MorKybRepository(session, company_id).current()
    if kyb is None:
        raise KybNotFound()
    return kyb


async def apply_provider_status(
    session: AsyncSession,
    *,
    company_id: int,
    provider_application_id: str,
    provider_status: str,
    reason: str | None,
) -> bool:
    """Apply the provider's `application.status_changed` to the merchant's KYB whose current
    application it is; False when it is none (an old application's late news changes
    nothing). A change that would go backwards is ignored."""
    kyb = await MorKybRepository(session, company_id).by_provider_id(provider_application_id)
    if kyb is None:
        return False
    status = statuses.OF_PROVIDER.get(provider_status)
    if status is None or kyb.status not in statuses.ALLOWED_FROM.get(status, frozenset()):
        return True
    kyb.status = status
    kyb.reason = reason if status in statuses.RESUBMITTABLE else None
    kyb.updated_at = utcnow()
    await session.flush()
    await _announce(session, kyb)
    return True


_DECISIONS = {
    statuses.APPROVED: Decision.APPROVED,
    statuses.REJECTED: Decision.REJECTED,
    statuses.NEEDS_INFO: Decision.MORE_INFORMATION_REQUIRED,
}


async def decide_in_sandbox(
    session: AsyncSession, providers: Providers, *, company_id: int, outcome: str
) -> None:
    """Decide the merchant's KYB under review as the sandbox provider's reviewers would; the
    outcome arrives as the provider's callback (delivered by the caller)."""
    kyb = await current(session, company_id=company_id)
    if kyb.status not in statuses.PENDING:
        raise KybNotInReview(f"The KYB is {kyb.status}; only one under review is decided.")
    simulation = providers.business_onboarding
    if not isinstance(simulation, BusinessOnboardingSimulation):
        raise ServiceUnavailable("The banking provider is not a sandbox.")
    application_id = kyb.provider_application_id
    decision = _DECISIONS[outcome]
    await commit_then_call(
        session,
        providers.policy,
        provider=BANKPROV,
        operation="decide",
        call=lambda: simulation.decide(
            company_id=company_id, application_id=application_id, decision=decision
        ),
        idempotent=False,
    )
