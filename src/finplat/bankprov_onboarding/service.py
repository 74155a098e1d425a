"""Banking-provider onboarding of personal users.

Flow (spec, "States and transitions"): after base KYC approval the user applies with a proof
of address (status `PENDING`); the provider may ask for documents and answers
(`pending_documents`), and decides (`approved` or `rejected`), reporting each change with an
`account.status_changed` callback (see `callbacks`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.bankprov_onboarding.models import BankprovApplication, BankprovDocument
from finplat.bankprov_onboarding.repository import ApplicationRepository, DocumentRepository
from finplat.bankprov_onboarding.schemas import MAX_DOCUMENT_FILES, PersonalOnboardingForm
from finplat.business import service as business
from finplat.documents.file_dates import latest_recorded_date
from finplat.documents.file_types import (
    PROOF_OF_ADDRESS_TYPES,
    VERIFICATION_DOCUMENT_TYPES,
    IdentifiedFile,
    UnreadableFile,
    identify,
)
from finplat.documents.multipart import UploadedFile
from finplat.documents.pdf_merge import merge
from finplat.errors import Conflict, ServiceUnavailable, ValidationFailed
from finplat.kit.clock import today
from finplat.kyc.approval import require_base_approval
from finplat.kyc.statuses import Outcome
from finplat.providers.banking_onboarding.port import (
    BankingOnboarding,
    Decision,
    InformationAnswer,
    Outstanding,
    PersonalApplication,
    ProofOfAddress,
    SandboxDecisions,
)
from finplat.providers.calls import commit_then_call
from finplat.providers.names import BankProvider, ExternalProvider
from finplat.providers.registry import Providers, configured
from finplat.provisioning import service as provisioning
from finplat.provisioning import statuses
from finplat.tiers import service as tiers
from finplat.users import service as users

PROVIDER = ExternalProvider.BANKPROV.value
PROOF_OF_ADDRESS_MAX_AGE_MONTHS = 3


class InvalidProofOfAddress(ValidationFailed):
    code = "INVALID_PROOF_OF_ADDRESS"
    message = "ProofOfAddress must be a readable JPG/JPEG, PNG or PDF file."


class ProofOfAddressTooOld(ValidationFailed):
    code = "PROOF_OF_ADDRESS_TOO_OLD"
    message = "The proof of address must not be older than three months."


class ProofOfAddressDateInFuture(ValidationFailed):
    code = "PROOF_OF_ADDRESS_DATE_IN_FUTURE"
    message = "ProofOfAddressDate cannot be in the future."


class InvalidDocument(ValidationFailed):
    code = "INVALID_DOCUMENT"
    message = "Every document must be a readable PDF, JPEG or PNG file."


class TooManyDocuments(ValidationFailed):
    code = "TOO_MANY_DOCUMENTS"
    message = f"Send at most {MAX_DOCUMENT_FILES} files at once."


class DocumentsMissing(ValidationFailed):
    code = "DOCUMENTS_MISSING"
    message = "Send the files as repeated `Files` parts, or one legacy `File` part."


class DocumentFieldsCombined(ValidationFailed):
    code = "DOCUMENT_FIELDS_COMBINED"
    message = "Send either `Files` or the legacy `File`, not both."


class BusinessUserNeedsKyb(Conflict):
    code = "BUSINESS_USER_NOT_ALLOWED"
    message = (
        "Business users are onboarded with the banking provider through the business "
        "application (KYB), not the personal onboarding."
    )


class TierExcludesBankprov(Conflict):
    code = "TIER_EXCLUDES_BANKPROV"
    message = "The user's tier includes no banking-provider product (IBAN or cards)."


class OnboardingAlreadySubmitted(Conflict):
    code = "BANKPROV_ONBOARDING_ALREADY_SUBMITTED"
    message = "The user's banking-provider onboarding was already submitted."


class OnboardingNotSubmitted(Conflict):
    code = "BANKPROV_ONBOARDING_NOT_SUBMITTED"
    message = "The user has no banking-provider onboarding; submit it first."


class OnboardingRejected(Conflict):
    code = "BANKPROV_ONBOARDING_REJECTED"
    message = "The banking provider rejected the user's onboarding."


def _adapter(providers: Providers) -> BankingOnboarding:
    return configured(providers.banking_onboarding, "No banking provider is configured.")


def earliest_proof_of_address_date(on: date) -> date:
    """Three calendar months before `on` (the last day of that month when shorter)."""
    month_index = on.year * 12 + on.month - 1 - PROOF_OF_ADDRESS_MAX_AGE_MONTHS
    year, month = divmod(month_index, 12)
    month += 1
    for day in range(on.day, 0, -1):
        try:
            return date(year, month, day)
        except ValueError:
            continue
    raise AssertionError("unreachable")


def check_proof_of_address(proof: UploadedFile, issued_on: date | None) -> IdentifiedFile:
    """The proof of address must be a readable JPG/JPEG, PNG or PDF not older than three
    months (spec, "Limits"). Its age is known from `ProofOfAddressDate` when the caller states
    it; otherwise from the latest date the file records about itself (PDF metadata, EXIF),
    which can only show a document too old; with neither, the provider's review decides."""
    try:
        identified = identify(proof.data, PROOF_OF_ADDRESS_TYPES)
    except UnreadableFile as exc:
        raise InvalidProofOfAddress(validation_errors={"ProofOfAddress": [str(exc)]}) from None
    now = today()
    earliest = earliest_proof_of_address_date(now)
    if issued_on is None:
        recorded = latest_recorded_date(proof.data, identified.type, today=now)
        if recorded is not None and recorded < earliest:
            raise ProofOfAddressTooOld(
                validation_errors={
                    "ProofOfAddress": [
                        f"The file was last written on {recorded}: a proof of address must "
                        f"be from {earliest} or later."
                    ]
                }
            )
        return identified
    if issued_on > now:
        raise ProofOfAddressDateInFuture(
            validation_errors={"ProofOfAddressDate": ["Must not be after today."]}
        )
    if issued_on < earliest:
        raise ProofOfAddressTooOld(
            validation_errors={"ProofOfAddressDate": [f"Must be on or after {earliest}."]}
        )
    return identified


async def _application(
    session: AsyncSession, *, company_id: int, user_id: int
) -> BankprovApplication:
    await users.get_user(session, company_id=company_id, user_id=user_id)
    application = await ApplicationRepository(session, company_id).for_user(user_id)
    if application is None:
        raise OnboardingNotSubmitted()
    return application


async def _status(session: AsyncSession, *, company_id: int, user_id: int) -> str:
    account = await provisioning.find(
        session, company_id=company_id, user_id=user_id, provider=BankProvider.BANKPROV
    )
    return account.status if account is not None else statuses.NOT_STARTED


async def submit_personal_onboarding(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    form: PersonalOnboardingForm,
    proof: UploadedFile,
) -> BankprovApplication:
    """Send the user's application to the banking provider and record it (status PENDING).

    Everything is checked before the call; the provider key is the user's, so a retry after a
    timeout reaches the same provider application and completes.
    """
    identified = check_proof_of_address(proof, form.ProofOfAddressDate)
    user = await users.get_user(session, company_id=company_id, user_id=user_id)
    if user.account_type != "personal":
        raise BusinessUserNeedsKyb()
    await require_base_approval(session, company_id=company_id, user_id=user_id)
    tier = (
        await tiers.get_tier(session, company_id=company_id, tier_id=user.tier_id)
        if user.tier_id is not None
        else None
    )
    if tier is None or not (tier.includes_bankprov_iban or tier.includes_bankprov_cards):
        raise TierExcludesBankprov()
    repo = ApplicationRepository(session, company_id)
    if await repo.for_user(user_id) is not None:
        raise OnboardingAlreadySubmitted()
    adapter = _adapter(providers)
    application = PersonalApplication(
        user_reference=str(user_id),
        requested_features=tuple(form.RequestedFeatures),
        main_purpose=form.MainPurpose,
        source_of_funds=form.SourceOfFunds,
        destination_of_funds=form.DestinationOfFunds,
        currencies_required=form.CurrenciesRequired,
        annual_volume=form.AnnualVolume,
        number_of_payments=form.NumberOfPayments,
        card_purposes=form.CardPurposes,
        atm_withdrawals_required=form.AtmWithdrawalsRequired,
        number_of_cards_required=form.NumberOfCardsRequired,
        card_annual_spend=form.CardAnnualSpend,
        proof_of_address=ProofOfAddress(
            identified.type.media_type, proof.data, form.ProofOfAddressDate
        ),
    )
    receipt = await commit_then_call(
        session,
        providers.policy,
        provider=PROVIDER,
        operation="submit_personal_onboarding",
        call=lambda: adapter.submit_personal_onboarding(
            company_id=company_id,
            idempotency_key=f"finplat:{company_id}:personal-onboarding:{user_id}",
            application=application,
        ),
        idempotent=True,
    )
    try:
        stored = await repo.add(
            BankprovApplication(
                user_id=user_id,
                correlation_id=receipt.correlation_id,
                provider_account_id=receipt.account_id,
                requested_features=list(form.RequestedFeatures),
                main_purpose=form.MainPurpose,
                source_of_funds=form.SourceOfFunds,
                destination_of_funds=form.DestinationOfFunds,
                currencies_required=form.CurrenciesRequired,
                annual_volume=form.AnnualVolume,
                number_of_payments=form.NumberOfPayments,
                card_purposes=form.CardPurposes,
                atm_withdrawals_required=form.AtmWithdrawalsRequired,
                number_of_cards_required=form.NumberOfCardsRequired,
                card_annual_spend=form.CardAnnualSpend,
                proof_of_address_type=identified.type.value,
                proof_of_address_size=len(proof.data),
                proof_of_address_sha256=hashlib.sha256(proof.data).hexdigest(),
                proof_of_address_date=form.ProofOfAddressDate,
            )
        )
    except IntegrityError:
        # A concurrent request for the same user recorded it first (same provider account).
        raise OnboardingAlreadySubmitted() from None
    await provisioning.set_status(
        session,
        company_id=company_id,
        user_id=user_id,
        provider=BankProvider.BANKPROV,
        status=statuses.PENDING,
        provider_account_id=receipt.account_id,
    )
    return stored


def select_documents(
    files: Sequence[UploadedFile], legacy: Sequence[UploadedFile]
) -> list[tuple[str, UploadedFile]]:
    """The uploads under their field names (`Files.0`, ... or `File`), checked for count."""
    if files and legacy:
        raise DocumentFieldsCombined(validation_errors={"File": ["Send `Files` or `File`."]})
    if len(legacy) > 1:
        raise ValidationFailed(validation_errors={"File": ["Send one `File`; use `Files`."]})
    if not files and not legacy:
        raise DocumentsMissing(validation_errors={"Files": ["Field required."]})
    if len(files) > MAX_DOCUMENT_FILES:
        raise TooManyDocuments(
            validation_errors={"Files": [f"At most {MAX_DOCUMENT_FILES} files."]}
        )
    if legacy:
        return [("File", legacy[0])]
    return [(f"Files.{i}", f) for i, f in enumerate(files)]


@dataclass(frozen=True)
class DocumentUpload:
    document: BankprovDocument
    status: str


async def upload_documents(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    uploads: Sequence[tuple[str, UploadedFile]],
) -> DocumentUpload:
    """Merge the files in order into one PDF and send it; `pending_documents` becomes
    `PENDING` (the provider resumes its checks). The same files again, also sent in parallel,
    return the same document."""
    identified: list[tuple[IdentifiedFile, bytes]] = []
    problems: dict[str, list[str]] = {}
    for field, upload in uploads:
        try:
            identified.append((identify(upload.data, VERIFICATION_DOCUMENT_TYPES), upload.data))
        except UnreadableFile as exc:
            problems[field] = [str(exc)]
    if problems:
        raise InvalidDocument(validation_errors=problems)
    application = await _application(session, company_id=company_id, user_id=user_id)
    if await _status(session, company_id=company_id, user_id=user_id) == (
        statuses.REJECTED_BANKPROV
    ):
        raise OnboardingRejected()
    fingerprint = hashlib.sha256(
        "".join(hashlib.sha256(data).hexdigest() for _, data in identified).encode()
    ).hexdigest()
    documents = DocumentRepository(session, company_id)
    document = await documents.by_fingerprint(application.id, fingerprint)
    if document is None:
        merged = merge(identified)
        adapter = _adapter(providers)
        account_id = application.provider_account_id
        receipt = await commit_then_call(
            session,
            providers.policy,
            provider=PROVIDER,
            operation="upload_document",
            call=lambda: adapter.upload_document(
                company_id=company_id,
                account_id=account_id,
                idempotency_key=f"finplat:{company_id}:document:{account_id}:{fingerprint}",
                pdf=merged.data,
            ),
            idempotent=True,
        )
        document = await _record_document(
            documents,
            BankprovDocument(
                application_id=application.id,
                provider_document_id=receipt.document_id,
                fingerprint=fingerprint,
                file_count=len(identified),
                page_count=merged.page_count,
                size_bytes=len(merged.data),
            ),
        )
    status = await _status(session, company_id=company_id, user_id=user_id)
    if status == statuses.PENDING_DOCUMENTS:
        status = await _resume_checks(session, company_id=company_id, user_id=user_id)
    return DocumentUpload(document, status)


async def _record_document(
    documents: DocumentRepository, document: BankprovDocument
) -> BankprovDocument:
    """Record the uploaded document, or answer the one already recorded for the same files
    (one document per application and fingerprint)."""
    session = documents.session
    try:
        # A savepoint: losing the race undoes only this insert.
        async with session.begin_nested():
            return await documents.add(document)
    except IntegrityError:
        # The same files, sent in parallel, were recorded first: the provider key is the same,
        # so the provider answered both with that document.
        found = await documents.by_fingerprint(document.application_id, document.fingerprint)
        if found is None:
            raise
        return found


async def _resume_checks(session: AsyncSession, *, company_id: int, user_id: int) -> str:
    """`pending_documents` becomes `PENDING`, unless the provider decided the account since
    its status was read."""
    return await provisioning.change_status_from(
        session,
        company_id=company_id,
        user_id=user_id,
        provider=BankProvider.BANKPROV,
        current=statuses.PENDING_DOCUMENTS,
        status=statuses.PENDING,
    )


@dataclass(frozen=True)
class Requirements:
    account_id: str
    status: str
    outstanding: Outstanding
    # Our person `Id` for each provider person id a request is about (business users).
    person_ids: dict[str, int]


async def _banking_account_id(session: AsyncSession, *, company_id: int, user_id: int) -> str:
    """The user's banking-provider account: opened by the personal onboarding application or
    by the business application's submission."""
    await users.get_user(session, company_id=company_id, user_id=user_id)
    account = await provisioning.find(
        session, company_id=company_id, user_id=user_id, provider=BankProvider.BANKPROV
    )
    if account is None or account.provider_account_id is None:
        raise OnboardingNotSubmitted()
    return account.provider_account_id


async def _requirements(
    session: AsyncSession, *, company_id: int, account_id: str, status: str, result: Outstanding
) -> Requirements:
    named = sorted({r.person_id for r in result.information if r.person_id is not None})
    people = await business.person_ids(session, company_id=company_id, provider_person_ids=named)
    return Requirements(account_id, status, result, people)


async def outstanding(
    session: AsyncSession, providers: Providers, *, company_id: int, user_id: int
) -> Requirements:
    """What the banking provider still waits for: documents and information requests."""
    account_id = await _banking_account_id(session, company_id=company_id, user_id=user_id)
    adapter = _adapter(providers)
    result = await commit_then_call(
        session,
        providers.policy,
        provider=PROVIDER,
        operation="information_requests",
        call=lambda: adapter.information_requests(company_id=company_id, account_id=account_id),
        idempotent=True,
    )
    status = await _status(session, company_id=company_id, user_id=user_id)
    return await _requirements(
        session, company_id=company_id, account_id=account_id, status=status, result=result
    )


async def answer_information(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    answers: Sequence[InformationAnswer],
) -> Requirements:
    """Send text answers; when nothing is outstanding any more (documents in, every request
    answered), `pending_documents` becomes `PENDING`."""
    account_id = await _banking_account_id(session, company_id=company_id, user_id=user_id)
    if await _status(session, company_id=company_id, user_id=user_id) == (
        statuses.REJECTED_BANKPROV
    ):
        raise OnboardingRejected()
    adapter = _adapter(providers)
    result = await commit_then_call(
        session,
        providers.policy,
        provider=PROVIDER,
        operation="answer_information",
        call=lambda: adapter.answer_information(
            company_id=company_id, account_id=account_id, answers=answers
        ),
        # Repeating the same answers changes nothing at the provider.
        idempotent=True,
    )
    status = await _status(session, company_id=company_id, user_id=user_id)
    nothing_outstanding = not result.documents_required and not result.information
    if status == statuses.PENDING_DOCUMENTS and nothing_outstanding:
        status = await _resume_checks(session, company_id=company_id, user_id=user_id)
    return await _requirements(
        session, company_id=company_id, account_id=account_id, status=status, result=result
    )


_DECISIONS = {
    Outcome.APPROVED: Decision.APPROVED,
    Outcome.REJECTED: Decision.REJECTED,
    Outcome.RESUBMISSION: Decision.RESUBMISSION,
}


async def complete_in_sandbox(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    outcome: Outcome,
) -> None:
    """Have the sandbox banking provider decide the user's checks; its callback
    (`account.status_changed`) then sets the status. 409 without an application."""
    application = await _application(session, company_id=company_id, user_id=user_id)
    controls = providers.banking_onboarding
    if not isinstance(controls, SandboxDecisions):
        raise ServiceUnavailable("The banking provider is not the sandbox.")
    account_id = application.provider_account_id
    await commit_then_call(
        session,
        providers.policy,
        provider=PROVIDER,
        operation="decide",
        call=lambda: controls.decide(
            company_id=company_id, account_id=account_id, outcome=_DECISIONS[outcome]
        ),
        idempotent=True,
    )
