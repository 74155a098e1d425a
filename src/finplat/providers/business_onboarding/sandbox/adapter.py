"""Sandbox banking provider, business onboarding: behaves like the provider's KYB API.

State lives in its own `sandbox_bankprov_business_*` tables, changed in its own transactions.
Creating operations deduplicate by (company, idempotency key): a repeat answers with the first
result and changes nothing. `add_person` announces the person with a `person.created`
callback in the provider's own shape; `submit_application` puts the application in review
(`application.status_changed` → `in_review`); `decide` (sandbox only) closes the review
(`application.status_changed` → approved with the new account's id, rejected, or
more_information_required).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db.dialect import for_update, insert_ignoring_conflicts
from finplat.db.unit_of_work import unit_of_work
from finplat.kit.clock import utcnow
from finplat.providers.business_onboarding.port import (
    ApplicationDetails,
    ApplicationState,
    Decision,
    DocumentUpload,
    PersonDetails,
    ProviderApplication,
    ProviderDocument,
    ProviderPerson,
)
from finplat.providers.business_onboarding.sandbox.models import (
    SandboxBusinessApplication,
    SandboxBusinessDocument,
    SandboxBusinessPerson,
)
from finplat.providers.errors import ProviderRejected
from finplat.providers.names import ExternalProvider
from finplat.providers.sandbox.faults import FaultMode
from finplat.providers.sandbox.simulator import Simulator

PROVIDER = ExternalProvider.BANKPROV.value
OPERATIONS = (
    "create_application",
    "update_compliance",
    "add_person",
    "upload_person_document",
    "upload_application_document",
    "submit_application",
    "decide",
)
PERSON_CREATED = "person.created"
APPLICATION_STATUS_CHANGED = "application.status_changed"
EDITABLE = (ApplicationState.DRAFT, ApplicationState.MORE_INFORMATION_REQUIRED)
UNDER_REVIEW = (ApplicationState.SUBMITTED, ApplicationState.IN_REVIEW)


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def _refusal(status: int, code: str, message: str, field: str, problem: str) -> ProviderRejected:
    """A refusal as the provider words it: its HTTP status, field errors and details."""
    return ProviderRejected(
        message,
        status=status,
        code=code,
        validation_errors={field: [problem]},
        details=json.dumps({"provider": PROVIDER, "httpStatus": status, "code": code}),
    )


class SandboxBusinessOnboarding:
    name = "sandbox"

    def __init__(self, factory: async_sessionmaker[AsyncSession], *, latency_ms: int = 0) -> None:
        self.factory = factory
        self.sim = Simulator(factory, provider=PROVIDER, latency_ms=latency_ms)

    async def create_application(
        self, *, company_id: int, idempotency_key: str, details: ApplicationDetails
    ) -> ProviderApplication:
        mode = await self.sim.enter(company_id, "create_application")
        now = utcnow()
        async with unit_of_work(self.factory) as session:
            await session.execute(
                insert_ignoring_conflicts(session, SandboxBusinessApplication).values(
                    company_id=company_id,
                    application_id=_new_id("bp_app"),
                    idempotency_key=idempotency_key,
                    status=ApplicationState.DRAFT.value,
                    market=details.market,
                    registered_name=details.registered_name,
                    registration_number=details.registration_number,
                    submissions=0,
                    created_at=now,
                    updated_at=now,
                )
            )
            row = (
                await session.execute(
                    select(SandboxBusinessApplication).where(
                        SandboxBusinessApplication.company_id == company_id,
                        SandboxBusinessApplication.idempotency_key == idempotency_key,
                    )
                )
            ).scalar_one()
            answer = ProviderApplication(row.application_id, ApplicationState(row.status))
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return answer

    async def update_compliance(
        self, *, company_id: int, application_id: str, requirements: Mapping[str, Any]
    ) -> None:
        mode = await self.sim.enter(company_id, "update_compliance")
        async with unit_of_work(self.factory) as session:
            application = await self._editable(session, company_id, application_id)
            application.compliance = json.dumps(dict(requirements), sort_keys=True, default=str)
            application.updated_at = utcnow()
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()

    async def add_person(
        self,
        *,
        company_id: int,
        application_id: str,
        idempotency_key: str,
        person: PersonDetails,
    ) -> ProviderPerson:
        mode = await self.sim.enter(company_id, "add_person")
        now = utcnow()
        async with unit_of_work(self.factory) as session:
            if await self._person_by_key(session, company_id, idempotency_key) is None:
                await self._editable(session, company_id, application_id)
                inserted = (
                    await session.execute(
                        insert_ignoring_conflicts(session, SandboxBusinessPerson)
                        .values(
                            company_id=company_id,
                            application_id=application_id,
                            person_id=_new_id("bp_per"),
                            idempotency_key=idempotency_key,
                            email=person.email,
                            role=person.role,
                            created_at=now,
                        )
                        .returning(SandboxBusinessPerson.person_id)
                    )
                ).scalar_one_or_none()
                if inserted is not None:
                    await self.sim.emit_callback(
                        session,
                        company_id=company_id,
                        type_=PERSON_CREATED,
                        data={
                            "id": inserted,
                            "primaryEmailAddress": person.email,
                            "applicationId": application_id,
                            "role": person.role,
                            "createdAt": now.isoformat(),
                        },
                    )
            existing = await self._person_by_key(session, company_id, idempotency_key)
            assert existing is not None
            answer = ProviderPerson(existing.person_id)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return answer

    async def upload_person_document(
        self,
        *,
        company_id: int,
        application_id: str,
        person_id: str,
        idempotency_key: str,
        document: DocumentUpload,
    ) -> ProviderDocument:
        mode = await self.sim.enter(company_id, "upload_person_document")
        answer = await self._store_document(
            company_id, application_id, person_id, idempotency_key, document
        )
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return answer

    async def upload_application_document(
        self,
        *,
        company_id: int,
        application_id: str,
        idempotency_key: str,
        document: DocumentUpload,
    ) -> ProviderDocument:
        mode = await self.sim.enter(company_id, "upload_application_document")
        answer = await self._store_document(
            company_id, application_id, None, idempotency_key, document
        )
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return answer

    async def submit_application(
        self, *, company_id: int, application_id: str, idempotency_key: str
    ) -> ProviderApplication:
        mode = await self.sim.enter(company_id, "submit_application")
        async with unit_of_work(self.factory) as session:
            application = await self._application(session, company_id, application_id)
            if application.last_submission_key != idempotency_key:
                if ApplicationState(application.status) not in EDITABLE:
                    raise _refusal(
                        409,
                        "APPLICATION_NOT_EDITABLE",
                        "The application is not open for submission.",
                        "Status",
                        f"The application is {application.status}.",
                    )
                await self._require_complete(session, application)
                previous = application.status
                application.account_id = application.account_id or _new_id("bp_acc")
                application.status = ApplicationState.IN_REVIEW.value
                application.submissions += 1
                application.last_submission_key = idempotency_key
                application.updated_at = utcnow()
                await self.sim.emit_callback(
                    session,
                    company_id=company_id,
                    type_=APPLICATION_STATUS_CHANGED,
                    data={
                        "applicationId": application_id,
                        "previousStatus": previous,
                        "status": ApplicationState.IN_REVIEW.value,
                        "accountId": application.account_id,
                    },
                )
            account_id = application.account_id
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return ProviderApplication(application_id, ApplicationState.SUBMITTED, account_id)

    async def decide(
        self, *, company_id: int, application_id: str, decision: Decision
    ) -> ProviderApplication:
        mode = await self.sim.enter(company_id, "decide")
        async with unit_of_work(self.factory) as session:
            application = await self._application(session, company_id, application_id)
            if ApplicationState(application.status) not in UNDER_REVIEW:
                raise _refusal(
                    409,
                    "APPLICATION_NOT_IN_REVIEW",
                    "Only an application in review can be decided.",
                    "Status",
                    f"The application is {application.status}.",
                )
            data: dict[str, Any] = {
                "applicationId": application_id,
                "previousStatus": application.status,
                "status": decision.value,
            }
            if decision is Decision.APPROVED:
                data["accountId"] = application.account_id
            elif decision is Decision.REJECTED:
                data["reason"] = "The business did not meet the provider's onboarding criteria."
            else:
                data["requiredInformation"] = [
                    "Proof of the registered address, dated within three months.",
                    "Identity document of every director.",
                ]
            application.status = decision.value
            application.updated_at = utcnow()
            await self.sim.emit_callback(
                session, company_id=company_id, type_=APPLICATION_STATUS_CHANGED, data=data
            )
            answer = ProviderApplication(
                application_id, ApplicationState(application.status), application.account_id
            )
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return answer

    async def _application(
        self, session: AsyncSession, company_id: int, application_id: str
    ) -> SandboxBusinessApplication:
        stmt = select(SandboxBusinessApplication).where(
            SandboxBusinessApplication.company_id == company_id,
            SandboxBusinessApplication.application_id == application_id,
        )
        application: SandboxBusinessApplication | None = (
            await session.execute(for_update(stmt))
        ).scalar_one_or_none()
        if application is None:
            raise _refusal(
                404,
                "APPLICATION_NOT_FOUND",
                "The provider has no such application.",
                "ApplicationId",
                "Unknown application.",
            )
        return application

    async def _editable(
        self, session: AsyncSession, company_id: int, application_id: str
    ) -> SandboxBusinessApplication:
        application = await self._application(session, company_id, application_id)
        if ApplicationState(application.status) not in EDITABLE:
            raise _refusal(
                409,
                "APPLICATION_NOT_EDITABLE",
                "The application can no longer be changed.",
                "Status",
                f"The application is {application.status}.",
            )
        return application

    async def _require_complete(
        self, session: AsyncSession, application: SandboxBusinessApplication
    ) -> None:
        people = (
            await session.execute(
                select(SandboxBusinessPerson.id)
                .where(SandboxBusinessPerson.application_id == application.application_id)
                .limit(1)
            )
        ).first()
        missing: dict[str, list[str]] = {}
        if people is None:
            missing["AssociatedPeople"] = ["At least one associated person is required."]
        if application.compliance is None:
            missing["ComplianceRequirements"] = ["The compliance requirements are required."]
        if missing:
            raise ProviderRejected(
                "The application is incomplete.",
                status=422,
                code="APPLICATION_INCOMPLETE",
                validation_errors=missing,
                details=json.dumps({"provider": PROVIDER, "httpStatus": 422}),
            )

    async def _person_by_key(
        self, session: AsyncSession, company_id: int, idempotency_key: str
    ) -> SandboxBusinessPerson | None:
        stmt = select(SandboxBusinessPerson).where(
            SandboxBusinessPerson.company_id == company_id,
            SandboxBusinessPerson.idempotency_key == idempotency_key,
        )
        return (await session.execute(stmt)).scalar_one_or_none()

    async def _store_document(
        self,
        company_id: int,
        application_id: str,
        person_id: str | None,
        idempotency_key: str,
        document: DocumentUpload,
    ) -> ProviderDocument:
        async with unit_of_work(self.factory) as session:
            stmt = select(SandboxBusinessDocument).where(
                SandboxBusinessDocument.company_id == company_id,
                SandboxBusinessDocument.idempotency_key == idempotency_key,
            )
            existing = (await session.execute(stmt)).scalar_one_or_none()
            if existing is None:
                await self._editable(session, company_id, application_id)
                if person_id is not None:
                    person = (
                        await session.execute(
                            select(SandboxBusinessPerson.id).where(
                                SandboxBusinessPerson.application_id == application_id,
                                SandboxBusinessPerson.person_id == person_id,
                            )
                        )
                    ).first()
                    if person is None:
                        raise _refusal(
                            404,
                            "PERSON_NOT_FOUND",
                            "The provider has no such person on this application.",
                            "PersonId",
                            "Unknown person.",
                        )
                await session.execute(
                    insert_ignoring_conflicts(session, SandboxBusinessDocument).values(
                        company_id=company_id,
                        application_id=application_id,
                        person_id=person_id,
                        document_id=_new_id("bp_doc"),
                        idempotency_key=idempotency_key,
                        document_type=document.document_type,
                        content_type=document.content_type,
                        size_bytes=len(document.content),
                        created_at=utcnow(),
                    )
                )
                existing = (await session.execute(stmt)).scalar_one()
            return ProviderDocument(existing.document_id)
