"""Sandbox banking provider: onboarding applications, documents and information requests.

It keeps its state in its own `sandbox_bankprov_*` tables, in its own transactions, and
deduplicates by idempotency key: a repeated application returns the first account (with the
answers replaced while it is pending), a repeated document upload returns the first document.
Decisions come from the sandbox endpoint (`decide`) and are reported as callbacks.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db.dialect import insert_ignoring_conflicts
from finplat.db.unit_of_work import unit_of_work
from finplat.documents.file_types import FileType, UnreadableFile, identify
from finplat.kit.clock import utcnow
from finplat.providers.banking_onboarding.port import (
    ACCOUNT_STATUS_CHANGED,
    AccountStatus,
    Decision,
    DocumentReceipt,
    InformationAnswer,
    InformationRequest,
    OnboardingReceipt,
    Outstanding,
    PersonalApplication,
)
from finplat.providers.banking_onboarding.sandbox.models import (
    SandboxBankprovAccount,
    SandboxBankprovDocument,
    SandboxBankprovInformationRequest,
)
from finplat.providers.errors import ProviderRejected
from finplat.providers.names import ExternalProvider
from finplat.providers.sandbox.faults import FaultMode
from finplat.providers.sandbox.simulator import Simulator

PROVIDER = ExternalProvider.BANKPROV.value
OPERATIONS = (
    "submit_personal_onboarding",
    "upload_document",
    "information_requests",
    "answer_information",
    "request_information",
    "decide",
)

# What the sandbox asks when it wants more from a personal applicant.
RESUBMISSION_QUESTIONS = (
    "Describe your occupation and your employer.",
    "Explain where the funds you will deposit first come from.",
)
_DECISIONS = {
    Decision.APPROVED: (AccountStatus.ACTIVE, None),
    Decision.REJECTED: (AccountStatus.REJECTED, "The applicant did not pass the checks."),
    Decision.RESUBMISSION: (
        AccountStatus.PENDING_DOCUMENTS,
        "Further documents and information are required.",
    ),
}


class AccountNotFound(ProviderRejected):
    status = 404
    code = "PROVIDER_ACCOUNT_NOT_FOUND"
    message = "The banking provider has no such account."


class InformationRequestUnknown(ProviderRejected):
    status = 404
    code = "INFORMATION_REQUEST_NOT_FOUND"
    message = "The banking provider has no such information request for this account."


class InformationAlreadyAnswered(ProviderRejected):
    status = 409
    code = "INFORMATION_REQUEST_ALREADY_ANSWERED"
    message = "The information request was already answered differently."


class SandboxBankingOnboarding:
    name = "sandbox"

    def __init__(self, factory: async_sessionmaker[AsyncSession], *, latency_ms: int = 0) -> None:
        self.factory = factory
        self.sim = Simulator(factory, provider=PROVIDER, latency_ms=latency_ms)

    async def submit_personal_onboarding(
        self, *, company_id: int, idempotency_key: str, application: PersonalApplication
    ) -> OnboardingReceipt:
        mode = await self.sim.enter(company_id, "submit_personal_onboarding")
        answers = dataclasses.asdict(application)
        proof = answers.pop("proof_of_address")
        answers["proof_of_address"] = {
            "media_type": proof["media_type"],
            "issued_on": proof["issued_on"],
            "size": len(proof["data"]),
        }
        answers_json = json.dumps(answers, default=str, sort_keys=True)
        proof_sha = hashlib.sha256(application.proof_of_address.data).hexdigest()
        async with unit_of_work(self.factory) as session:
            await session.execute(
                insert_ignoring_conflicts(session, SandboxBankprovAccount).values(
                    company_id=company_id,
                    idempotency_key=idempotency_key,
                    account_id=f"bp_acc_{uuid.uuid4().hex[:24]}",
                    correlation_id=f"bp_cor_{uuid.uuid4().hex[:24]}",
                    kind="personal",
                    status=AccountStatus.PENDING.value,
                    documents_required=False,
                    application=answers_json,
                    proof_of_address_sha256=proof_sha,
                    calls=0,
                    created_at=utcnow(),
                    updated_at=utcnow(),
                )
            )
            account = await self._by_key(session, idempotency_key)
            if account.company_id != company_id:
                raise ProviderRejected(
                    "The provider already used this key for another client.",
                    code="PROVIDER_IDEMPOTENCY_MISMATCH",
                )
            account.calls += 1
            if account.status == AccountStatus.PENDING.value:
                account.application = answers_json
                account.proof_of_address_sha256 = proof_sha
                account.updated_at = utcnow()
            receipt = OnboardingReceipt(
                account.correlation_id, account.account_id, AccountStatus(account.status)
            )
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return receipt

    async def upload_document(
        self, *, company_id: int, account_id: str, idempotency_key: str, pdf: bytes
    ) -> DocumentReceipt:
        mode = await self.sim.enter(company_id, "upload_document")
        try:
            pages = identify(pdf, frozenset({FileType.PDF})).pages
        except UnreadableFile as exc:
            raise ProviderRejected(f"The provider could not read the document: {exc}") from None
        async with unit_of_work(self.factory) as session:
            account = await self._account(session, company_id, account_id)
            await session.execute(
                insert_ignoring_conflicts(session, SandboxBankprovDocument).values(
                    company_id=company_id,
                    account_id=account_id,
                    idempotency_key=idempotency_key,
                    document_id=f"bp_doc_{uuid.uuid4().hex[:24]}",
                    content=pdf,
                    page_count=pages,
                    calls=0,
                    created_at=utcnow(),
                )
            )
            document = (
                await session.execute(
                    select(SandboxBankprovDocument).where(
                        SandboxBankprovDocument.idempotency_key == idempotency_key
                    )
                )
            ).scalar_one()
            if document.account_id != account_id:
                raise ProviderRejected(
                    "The provider already used this key for another document.",
                    code="PROVIDER_IDEMPOTENCY_MISMATCH",
                )
            document.calls += 1
            account.documents_required = False
            account.updated_at = utcnow()
            receipt = DocumentReceipt(document.document_id, document.page_count)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return receipt

    async def information_requests(self, *, company_id: int, account_id: str) -> Outstanding:
        await self.sim.enter(company_id, "information_requests")
        async with unit_of_work(self.factory) as session:
            return Outstanding(
                await self._documents_required(session, company_id, account_id),
                await self._outstanding(session, company_id, account_id),
            )

    async def answer_information(
        self, *, company_id: int, account_id: str, answers: Sequence[InformationAnswer]
    ) -> Outstanding:
        mode = await self.sim.enter(company_id, "answer_information")
        async with unit_of_work(self.factory) as session:
            ids = [a.request_id for a in answers]
            rows = {
                row.request_id: row
                for row in (
                    await session.execute(
                        select(SandboxBankprovInformationRequest).where(
                            SandboxBankprovInformationRequest.company_id == company_id,
                            SandboxBankprovInformationRequest.account_id == account_id,
                            SandboxBankprovInformationRequest.request_id.in_(ids),
                        )
                    )
                ).scalars()
            }
            unknown = [i for i in ids if i not in rows]
            if unknown:
                raise InformationRequestUnknown(
                    validation_errors={"RequestId": [f"Unknown request {i}." for i in unknown]}
                )
            for answer in answers:
                row = rows[answer.request_id]
                if row.answer is not None and row.answer != answer.answer:
                    raise InformationAlreadyAnswered(
                        validation_errors={"RequestId": [f"{row.request_id} is answered."]}
                    )
                if row.answer is None:
                    row.answer = answer.answer
                    row.answered_at = utcnow()
            await session.flush()
            remaining = Outstanding(
                await self._documents_required(session, company_id, account_id),
                await self._outstanding(session, company_id, account_id),
            )
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return remaining

    async def request_information(
        self,
        company_id: int,
        account_id: str,
        questions: Sequence[str],
        person_id: str | None = None,
    ) -> list[InformationRequest]:
        """Ask the account holder questions (about one business-application person when
        `person_id` is given). The account may be any this provider knows of, including a
        business account opened by the business application."""
        await self.sim.enter(company_id, "request_information")
        async with unit_of_work(self.factory) as session:
            await self._ask(session, company_id, account_id, questions, person_id)
            return await self._outstanding(session, company_id, account_id)

    async def decide(self, *, company_id: int, account_id: str, outcome: Decision) -> None:
        """Decide the account's checks and tell the platform with `account.status_changed`.
        RESUBMISSION also asks for documents and answers to the RESUBMISSION_QUESTIONS."""
        await self.sim.enter(company_id, "decide")
        status, reason = _DECISIONS[outcome]
        async with unit_of_work(self.factory) as session:
            account = await self._account(session, company_id, account_id)
            account.status = status.value
            account.updated_at = utcnow()
            if outcome is Decision.RESUBMISSION:
                account.documents_required = True
                await self._ask(session, company_id, account_id, RESUBMISSION_QUESTIONS, None)
            await session.flush()
            await self.sim.emit_callback(
                session,
                company_id=company_id,
                type_=ACCOUNT_STATUS_CHANGED,
                data={"accountId": account_id, "status": status.value, "reason": reason},
            )

    async def _ask(
        self,
        session: AsyncSession,
        company_id: int,
        account_id: str,
        questions: Sequence[str],
        person_id: str | None,
    ) -> None:
        for question in questions:
            session.add(
                SandboxBankprovInformationRequest(
                    company_id=company_id,
                    account_id=account_id,
                    request_id=f"bp_irq_{uuid.uuid4().hex[:24]}",
                    question=question,
                    person_id=person_id,
                    created_at=utcnow(),
                )
            )
        await session.flush()

    async def _by_key(self, session: AsyncSession, key: str) -> SandboxBankprovAccount:
        stmt = select(SandboxBankprovAccount).where(SandboxBankprovAccount.idempotency_key == key)
        return (await session.execute(stmt)).scalar_one()

    async def _account(
        self, session: AsyncSession, company_id: int, account_id: str
    ) -> SandboxBankprovAccount:
        stmt = select(SandboxBankprovAccount).where(
            SandboxBankprovAccount.company_id == company_id,
            SandboxBankprovAccount.account_id == account_id,
        )
        account = (await session.execute(stmt)).scalar_one_or_none()
        if account is None:
            raise AccountNotFound()
        return account

    async def _documents_required(
        self, session: AsyncSession, company_id: int, account_id: str
    ) -> bool:
        """Whether documents are requested (accounts opened elsewhere, such as by a business
        application, have no document request here)."""
        stmt = select(SandboxBankprovAccount.documents_required).where(
            SandboxBankprovAccount.company_id == company_id,
            SandboxBankprovAccount.account_id == account_id,
        )
        return bool((await session.execute(stmt)).scalar_one_or_none())

    async def _outstanding(
        self, session: AsyncSession, company_id: int, account_id: str
    ) -> list[InformationRequest]:
        stmt = (
            select(SandboxBankprovInformationRequest)
            .where(
                SandboxBankprovInformationRequest.company_id == company_id,
                SandboxBankprovInformationRequest.account_id == account_id,
                SandboxBankprovInformationRequest.answer.is_(None),
            )
            .order_by(SandboxBankprovInformationRequest.id)
        )
        return [
            InformationRequest(row.request_id, row.question, row.person_id, row.created_at)
            for row in (await session.execute(stmt)).scalars()
        ]


async def stored_documents(
    factory: async_sessionmaker[AsyncSession], *, account_id: str
) -> list[bytes]:
    """The PDFs the sandbox provider holds for an account, oldest first (for tests)."""
    async with unit_of_work(factory) as session:
        stmt = (
            select(SandboxBankprovDocument.content)
            .where(SandboxBankprovDocument.account_id == account_id)
            .order_by(SandboxBankprovDocument.id)
        )
        return list((await session.execute(stmt)).scalars())


async def application_count(factory: async_sessionmaker[AsyncSession], *, company_id: int) -> int:
    """How many applications the sandbox provider holds for a company (for tests)."""
    async with unit_of_work(factory) as session:
        stmt = select(func.count()).where(SandboxBankprovAccount.company_id == company_id)
        return int((await session.execute(stmt)).scalar_one())
