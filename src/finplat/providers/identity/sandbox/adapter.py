"""Sandbox verification provider.

Behaves like a hosted identity-verification service: applicants keyed by the platform's
reference, short-lived single-use access tokens for its hosted page and mobile SDK, reusable
identities shared by token, manual document payloads, and reviews that arrive later as
`applicant.reviewed` callbacks. Reviews are decided on the hosted page by the applicant (a
sandbox choice), or through `review` (the sandbox endpoint); a shared identity is reviewed at
once: approved when its donor applicant was approved with the same name and birth date.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import uuid
from datetime import timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db.dialect import insert_ignoring_conflicts
from finplat.db.unit_of_work import unit_of_work
from finplat.errors import NotFound
from finplat.kit.clock import utcnow
from finplat.providers.errors import ProviderRejected
from finplat.providers.identity.port import (
    APPLICANT_REVIEWED,
    AccessToken,
    Applicant,
    ApplicantData,
    IdentityDocument,
    RejectType,
    ReviewAnswer,
    ShareToken,
    TokenKind,
)
from finplat.providers.identity.sandbox.models import SandboxAccessToken, SandboxApplicant
from finplat.providers.names import ExternalProvider
from finplat.providers.sandbox.faults import FaultMode
from finplat.providers.sandbox.simulator import Simulator

HOSTED_PAGE_PATH = "/sandbox/identity/verify"
SHARE = "SHARE"
OPERATIONS = (
    "submit_edd",
    "create_applicant",
    "access_token",
    "import_shared_identity",
    "submit_document",
    "share_token",
    "tax_id",
)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class InvalidAccessToken(NotFound):
    code = "ACCESS_TOKEN_INVALID"
    message = "This verification link is unknown, expired or already used."


class SandboxIdentityVerification:
    name = ExternalProvider.IDENTITY.value

    def __init__(self, factory: async_sessionmaker[AsyncSession], *, latency_ms: int = 0) -> None:
        self.factory = factory
        self.sim = Simulator(factory, provider=self.name, latency_ms=latency_ms)

    async def create_applicant(self, *, company_id: int, data: ApplicantData) -> Applicant:
        mode = await self.sim.enter(company_id, "create_applicant")
        async with unit_of_work(self.factory) as session:
            # One applicant per reference even when requests race: the losing insert does
            # nothing and reads the winner's row.
            inserted = (
                await session.execute(
                    insert_ignoring_conflicts(session, SandboxApplicant)
                    .values(
                        applicant_id=uuid.uuid4().hex[:24],
                        company_id=company_id,
                        reference=data.reference,
                        level_name=data.level_name,
                        first_name=data.first_name,
                        last_name=data.last_name,
                        email=data.email,
                        date_of_birth=data.date_of_birth,
                        country=data.country,
                        nationality=data.nationality,
                        tin=data.tin,
                        questionnaire=json.dumps(data.questionnaire),
                    )
                    .returning(SandboxApplicant.id)
                )
            ).scalar_one_or_none()
            row = await self._by_reference(session, company_id, data.reference)
            assert row is not None
            if inserted is None:
                # Later requests may add what the first lacked (a tax id, answers).
                if data.tin:
                    row.tin = data.tin
                if data.questionnaire:
                    row.questionnaire = json.dumps(data.questionnaire)
            applicant = Applicant(row.applicant_id, is_new=inserted is not None)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return applicant

    async def access_token(
        self,
        *,
        company_id: int,
        applicant_id: str,
        kind: TokenKind,
        ttl: timedelta,
        base_url: str,
    ) -> AccessToken:
        mode = await self.sim.enter(company_id, "access_token")
        token = f"sbx_{kind.value.lower()}_{secrets.token_urlsafe(32)}"
        expires_at = utcnow() + ttl
        async with unit_of_work(self.factory) as session:
            await self._applicant(session, company_id, applicant_id)
            session.add(
                SandboxAccessToken(
                    token_hash=token_hash(token),
                    kind=kind.value,
                    applicant_id=applicant_id,
                    company_id=company_id,
                    expires_at=expires_at,
                )
            )
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        # The token travels in the fragment: browsers never send it to a server, so it stays
        # out of access logs; the page posts it with the form.
        url = f"{base_url.rstrip('/')}{HOSTED_PAGE_PATH}#token={token}"
        return AccessToken(token, expires_at, url if kind is TokenKind.HOSTED else None)

    async def import_shared_identity(
        self, *, company_id: int, applicant_id: str, share_token: str
    ) -> None:
        mode = await self.sim.enter(company_id, "import_shared_identity")
        async with unit_of_work(self.factory) as session:
            applicant = await self._applicant(session, company_id, applicant_id)
            donor = await self._redeem(session, share_token, kind=SHARE)
            if donor is None:
                raise ProviderRejected(
                    "No such share token: it is unknown, expired or already used.",
                    status=404,
                    code="SHARE_TOKEN_NOT_FOUND",
                )
            same_person = (
                donor.first_name.casefold(),
                donor.last_name.casefold(),
                donor.date_of_birth,
            ) == (
                applicant.first_name.casefold(),
                applicant.last_name.casefold(),
                applicant.date_of_birth,
            )
            approved = donor.review_answer == ReviewAnswer.GREEN.value and same_person
            applicant.source = SHARE
            applicant.review_status = "pending"
            if mode is not FaultMode.PENDING:
                await self._complete(
                    session,
                    applicant,
                    ReviewAnswer.GREEN if approved else ReviewAnswer.RED,
                    RejectType.FINAL,
                )
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()

    async def submit_document(
        self, *, company_id: int, applicant_id: str, document: IdentityDocument
    ) -> None:
        mode = await self.sim.enter(company_id, "submit_document")
        async with unit_of_work(self.factory) as session:
            applicant = await self._applicant(session, company_id, applicant_id)
            applicant.source = "MANUAL"
            applicant.document_type = document.type
            applicant.review_status = "pending"
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()

    async def share_token(
        self, *, company_id: int, applicant_id: str, ttl: timedelta
    ) -> ShareToken:
        mode = await self.sim.enter(company_id, "share_token")
        token = f"sbx_share_{secrets.token_urlsafe(32)}"
        expires_at = utcnow() + ttl
        async with unit_of_work(self.factory) as session:
            applicant = await self._applicant(session, company_id, applicant_id)
            if applicant.review_answer != ReviewAnswer.GREEN.value:
                raise ProviderRejected(
                    "Only an approved applicant's identity can be shared.",
                    status=409,
                    code="APPLICANT_NOT_APPROVED",
                )
            session.add(
                SandboxAccessToken(
                    token_hash=token_hash(token),
                    kind=SHARE,
                    applicant_id=applicant_id,
                    company_id=company_id,
                    expires_at=expires_at,
                )
            )
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return ShareToken(token, expires_at)

    async def tax_id(self, *, company_id: int, applicant_id: str) -> str | None:
        await self.sim.enter(company_id, "tax_id")
        async with unit_of_work(self.factory) as session:
            return (await self._applicant(session, company_id, applicant_id)).tin

    async def submit_edd(
        self, *, company_id: int, applicant_id: str, answers: dict[str, Any]
    ) -> None:
        mode = await self.sim.enter(company_id, "submit_edd")
        async with unit_of_work(self.factory) as session:
            applicant = await self._applicant(session, company_id, applicant_id)
            questionnaire = json.loads(applicant.questionnaire or "{}")
            questionnaire["cryptoEdd"] = answers
            applicant.questionnaire = json.dumps(questionnaire, separators=(",", ":"))
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()

    async def review(
        self, *, company_id: int, applicant_id: str, answer: ReviewAnswer, reject_type: RejectType
    ) -> None:
        async with unit_of_work(self.factory) as session:
            applicant = await self._applicant(session, company_id, applicant_id)
            await self._complete(session, applicant, answer, reject_type)

    async def submit_hosted(
        self, *, token: str, document_type: str, answer: ReviewAnswer, reject_type: RejectType
    ) -> None:
        """The hosted page's form: the applicant submits; the sandbox decides as chosen."""
        async with unit_of_work(self.factory) as session:
            redeemed = await self._redeem(session, token, kind=TokenKind.HOSTED.value)
            if redeemed is None:
                raise InvalidAccessToken()
            redeemed.source = TokenKind.HOSTED.value
            redeemed.document_type = document_type
            await self._complete(session, redeemed, answer, reject_type)

    async def _complete(
        self,
        session: AsyncSession,
        applicant: SandboxApplicant,
        answer: ReviewAnswer,
        reject_type: RejectType,
    ) -> None:
        applicant.review_status = "completed"
        applicant.review_answer = answer.value
        applicant.reject_type = None if answer is ReviewAnswer.GREEN else reject_type.value
        data: dict[str, Any] = {
            "applicantId": applicant.applicant_id,
            "externalUserId": applicant.reference,
            "levelName": applicant.level_name,
            "reviewStatus": "completed",
            "reviewResult": {"reviewAnswer": answer.value},
        }
        if answer is ReviewAnswer.RED:
            data["reviewResult"]["reviewRejectType"] = reject_type.value
        await session.flush()
        await self.sim.emit_callback(
            session, company_id=applicant.company_id, type_=APPLICANT_REVIEWED, data=data
        )

    async def _by_reference(
        self, session: AsyncSession, company_id: int, reference: str
    ) -> SandboxApplicant | None:
        stmt = select(SandboxApplicant).where(
            SandboxApplicant.company_id == company_id, SandboxApplicant.reference == reference
        )
        return (await session.execute(stmt)).scalar_one_or_none()

    async def _applicant(
        self, session: AsyncSession, company_id: int, applicant_id: str
    ) -> SandboxApplicant:
        stmt = select(SandboxApplicant).where(
            SandboxApplicant.company_id == company_id,
            SandboxApplicant.applicant_id == applicant_id,
        )
        applicant = (await session.execute(stmt)).scalar_one_or_none()
        if applicant is None:
            raise ProviderRejected(
                "The provider has no such applicant.", status=404, code="APPLICANT_NOT_FOUND"
            )
        return applicant

    async def _live_token(
        self, session: AsyncSession, token: str, kind: str
    ) -> SandboxAccessToken | None:
        stmt = select(SandboxAccessToken).where(
            SandboxAccessToken.token_hash == token_hash(token),
            SandboxAccessToken.kind == kind,
            SandboxAccessToken.used_at.is_(None),
            SandboxAccessToken.expires_at > utcnow(),
        )
        return (await session.execute(stmt)).scalar_one_or_none()

    async def _redeem(
        self, session: AsyncSession, token: str, *, kind: str
    ) -> SandboxApplicant | None:
        """Use a live token once (a conditional UPDATE, so two redemptions cannot both win)."""
        live = await self._live_token(session, token, kind)
        if live is None:
            return None
        used = await session.execute(
            update(SandboxAccessToken)
            .where(SandboxAccessToken.id == live.id, SandboxAccessToken.used_at.is_(None))
            .values(used_at=utcnow())
        )
        if not getattr(used, "rowcount", 0):
            return None
        stmt = select(SandboxApplicant).where(SandboxApplicant.applicant_id == live.applicant_id)
        return (await session.execute(stmt)).scalar_one()
