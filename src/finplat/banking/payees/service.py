"""Payees: create with a verification challenge, verify, list, read, delete; and the check the
payouts use (`active_payee`).

Lifecycle: `PENDING_VERIFICATION` (token issued, 10 minutes) -> `ACTIVE` once the right token
is presented and the banking provider has registered the payee; `VERIFICATION_FAILED` after
`MAX_ATTEMPTS` wrong tokens; `EXPIRED` when the token ran out unconfirmed; `DELETED` on
request. The provider is given a key derived from the payee id, so a registration repeated
after a lost answer (timeout) is deduplicated there and yields one provider payee.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

from schwifty import BIC, IBAN
from schwifty.exceptions import SchwiftyException
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking import accounts
from finplat.banking.payees import repository, verification
from finplat.banking.payees.models import Payee, PayeeStatus
from finplat.banking.payees.repository import PayeeRepository
from finplat.banking.payees.required_fields import (
    SEPA_METHODS,
    FieldSpec,
    PayeeCurrency,
    PaymentMethod,
    PaymentType,
    form_fields,
    problems,
    supports,
)
from finplat.errors import ApiError, Conflict, NotFound, ValidationFailed
from finplat.events import service as events
from finplat.kit.clock import utcnow
from finplat.kit.pagination import PageRequest, PageSlice, fetch_page
from finplat.providers.banking.port import PayeeDetails, PayeesPort, ProviderPayee
from finplat.providers.calls import CallPolicy, commit_then_call
from finplat.providers.names import BankProvider
from finplat.users import service as users

PROVIDER = BankProvider.BANKPROV.value
EVENT_DOMAIN = "payee"


class PayeeNotFound(NotFound):
    code = "PAYEE_NOT_FOUND"
    message = "No payee with that PayeeId for this user."


class PayeeNotVerified(Conflict):
    code = "PAYEE_NOT_VERIFIED"
    message = "The payee has not been verified: confirm its verification token first."


class InvalidIban(ApiError):
    status = 400
    code = "INVALID_IBAN"
    message = "The IBAN is not valid."


class InvalidBic(ApiError):
    status = 400
    code = "INVALID_BIC"
    message = "The BIC is not valid."


class IbanNotSepa(ApiError):
    status = 400
    code = "IBAN_NOT_SEPA"
    message = "SEPA payments need an IBAN of a country in the SEPA zone."


class InvalidVerificationToken(ApiError):
    status = 403
    code = "INVALID_VERIFICATION_TOKEN"
    message = "The verification token is not the payee's."


class VerificationLocked(Conflict):
    code = "PAYEE_VERIFICATION_LOCKED"
    message = "Too many wrong verification tokens: the payee is locked. Create it again."


class VerificationTokenExpired(Conflict):
    code = "VERIFICATION_TOKEN_EXPIRED"
    message = "The verification token has expired. Create the payee again."


class PayeeAlreadyVerified(Conflict):
    code = "PAYEE_ALREADY_VERIFIED"
    message = "The payee is already verified."


@dataclass(frozen=True)
class NewPayee:
    """A create request, validated against the catalogue."""

    name: str
    payment_type: PaymentType
    payment_method: PaymentMethod
    currency: PayeeCurrency
    iban: str | None = None
    bic: str | None = None
    bank_name: str | None = None
    comments: str | None = None
    account_number: str | None = None
    sort_code: str | None = None
    bank_country: str | None = None

    def __repr__(self) -> str:  # never print full account details
        return f"NewPayee(payment_method={self.payment_method!r}, currency={self.currency!r})"


@dataclass(frozen=True)
class Challenge:
    payee: Payee
    token: str  # the plain token: answered once, never stored


def new_payee_id() -> str:
    return f"pye_{secrets.token_hex(12)}"


def registration_key(payee: Payee) -> str:
    """The provider idempotency key of the payee's registration: stable for the payee, so a
    retry after a lost answer reaches the provider with the same key."""
    return f"payee-register:{payee.company_id}:{payee.id}"


def effective_status(payee: Payee, now: datetime | None = None) -> PayeeStatus:
    """The status to report: a pending payee whose token ran out unconfirmed is `EXPIRED`
    even before the maintenance job writes it."""
    status = PayeeStatus(payee.status)
    if (
        status is PayeeStatus.PENDING_VERIFICATION
        and payee.token_accepted_at is None
        and payee.token_expires_at <= (now or utcnow())
    ):
        return PayeeStatus.EXPIRED
    return status


# ---------------------------------------------------------------------------------- form


async def form(
    session: AsyncSession,
    *,
    company_id: int,
    user_id: int,
    method: PaymentMethod,
    currency: PayeeCurrency,
) -> tuple[FieldSpec, ...] | None:
    """The fields of a payee paid by `method` in `currency`, or None when the method does not
    carry the currency. The user must exist; a banking account is not needed to read it."""
    await users.get_user(session, company_id=company_id, user_id=user_id)
    return form_fields(method) if supports(method, currency) else None


# ------------------------------------------------------------------------------ validation


def check_request(data: NewPayee) -> None:
    """The per-method rules (stated in the schema's `anyOf`), then what a schema cannot state:
    the IBAN's checksum and country format, the BIC's country, and the SEPA zone."""
    found = problems(
        data.payment_method,
        data.currency,
        {
            "Iban": data.iban,
            "Bic": data.bic,
            "BankName": data.bank_name,
            "AccountNumber": data.account_number,
            "SortCode": data.sort_code,
            "BankCountry": data.bank_country,
        },
    )
    if found:
        raise ValidationFailed(validation_errors=found)
    if data.iban is not None:
        try:
            iban = IBAN(data.iban)
        except SchwiftyException as exc:
            raise InvalidIban(
                f"The IBAN is not valid: {exc}.", validation_errors={"Iban": [str(exc)]}
            ) from None
        if data.payment_method in SEPA_METHODS and not iban.in_sepa_zone:
            raise IbanNotSepa(
                f"{iban.country_code} is not in the SEPA zone.",
                validation_errors={"Iban": ["The IBAN's country is not in the SEPA zone."]},
            )
    if data.bic is not None:
        try:
            BIC(data.bic)
        except SchwiftyException as exc:
            raise InvalidBic(
                f"The BIC is not valid: {exc}.", validation_errors={"Bic": [str(exc)]}
            ) from None


# --------------------------------------------------------------------------------- create


async def create(
    session: AsyncSession,
    *,
    company_id: int,
    user_id: int,
    account_id: str,
    data: NewPayee,
) -> Challenge:
    """Store the payee pending verification and issue its one-time token (one transaction:
    with an Idempotency-Key, the route class records the answer in the same commit)."""
    now = utcnow()
    token = verification.new_token()
    payee_id = new_payee_id()
    account_code = data.iban or data.account_number
    assert account_code is not None  # guaranteed by the catalogue check
    pending = {
        k: v
        for k, v in (
            ("iban", data.iban),
            ("account_number", data.account_number),
            ("sort_code", data.sort_code),
        )
        if v is not None
    }
    payee = await PayeeRepository(session, company_id).add(
        Payee(
            id=payee_id,
            user_id=user_id,
            provider=PROVIDER,
            account_id=account_id,
            name=data.name,
            payment_type=data.payment_type.value,
            payment_method=data.payment_method.value,
            currency=data.currency.value,
            account_number_last4=account_code[-4:],
            bic=data.bic,
            bank_name=data.bank_name,
            bank_country=data.bank_country,
            comments=data.comments,
            status=PayeeStatus.PENDING_VERIFICATION.value,
            token_hash=verification.digest(payee_id, token),
            token_expires_at=now + verification.LIFETIME,
            verification_attempts=0,
            pending_details=pending,
            created_at=now,
            updated_at=now,
        )
    )
    await _record(session, payee, "payee.created")
    return Challenge(payee=payee, token=token)


# --------------------------------------------------------------------------------- verify


async def verify(
    session: AsyncSession,
    banking: PayeesPort,
    policy: CallPolicy,
    *,
    company_id: int,
    user_id: int,
    payee_id: str,
    token: str,
) -> Payee:
    """Check the token (wrong ones are counted and committed even though the request fails),
    then register the payee at the provider and activate it."""
    await users.get_user(session, company_id=company_id, user_id=user_id)
    repo = PayeeRepository(session, company_id)
    payee = await _own(repo, user_id, payee_id, lock=True)
    now = utcnow()
    status = PayeeStatus(payee.status)
    if status is PayeeStatus.ACTIVE:
        raise PayeeAlreadyVerified()
    if status is PayeeStatus.VERIFICATION_FAILED:
        raise VerificationLocked()
    if status is PayeeStatus.EXPIRED:
        raise VerificationTokenExpired()
    right = verification.matches(payee.id, token, payee.token_hash)
    if payee.token_accepted_at is None:
        if payee.token_expires_at <= now:
            _wipe(payee, PayeeStatus.EXPIRED)
            await session.commit()
            raise VerificationTokenExpired()
        if not right:
            payee.verification_attempts += 1
            left = verification.MAX_ATTEMPTS - payee.verification_attempts
            if left <= 0:
                _wipe(payee, PayeeStatus.VERIFICATION_FAILED)
                await _record(session, payee, "payee.verification_failed")
            await session.commit()
            if left <= 0:
                # The answer says what the payee has become, as a payout approval's does.
                raise VerificationLocked()
            raise InvalidVerificationToken(
                f"The verification token is not the payee's; {left} attempts left."
            )
        payee.token_accepted_at = now
    elif not right:
        # The right token was already presented; only its registration is unfinished.
        raise InvalidVerificationToken()
    details = _details(payee)
    account_id, key = payee.account_id, registration_key(payee)
    registered = await commit_then_call(  # commits first: the accepted token is kept
        session,
        policy,
        provider=PROVIDER,
        operation="register_payee",
        call=lambda: banking.register_payee(
            company_id=company_id, account_id=account_id, idempotency_key=key, details=details
        ),
        idempotent=True,
    )
    payee = await _own(repo, user_id, payee_id, lock=True, deleted_too=True)
    if payee.status == PayeeStatus.ACTIVE.value:  # a concurrent confirmation finished it
        return payee
    if payee.status == PayeeStatus.DELETED.value:  # deleted while the provider registered it
        await _remove_at_provider(session, banking, policy, company_id, registered.payee_id)
        raise PayeeNotFound()
    _activate(payee, registered)
    await _record(session, payee, "payee.verified")
    return payee


def _activate(payee: Payee, registered: ProviderPayee) -> None:
    _wipe(payee, PayeeStatus.ACTIVE)
    payee.provider_payee_id = registered.payee_id
    payee.verified_at = utcnow()


def _wipe(payee: Payee, status: PayeeStatus) -> None:
    """Leave `PENDING_VERIFICATION`: the token hash and full account details go."""
    payee.status = status.value
    payee.token_hash = None
    payee.pending_details = None


def _details(payee: Payee) -> PayeeDetails:
    pending = payee.pending_details or {}
    return PayeeDetails(
        name=payee.name,
        payment_type=payee.payment_type,
        payment_method=payee.payment_method,
        currency=payee.currency,
        iban=pending.get("iban"),
        account_number=pending.get("account_number"),
        sort_code=pending.get("sort_code"),
        bic=payee.bic,
        bank_name=payee.bank_name,
        bank_country=payee.bank_country,
    )


# ------------------------------------------------------------------------ list, get, delete


async def list_payees(
    session: AsyncSession, *, company_id: int, user_id: int, page: PageRequest
) -> PageSlice[Payee]:
    await users.get_user(session, company_id=company_id, user_id=user_id)
    return await fetch_page(session, PayeeRepository(session, company_id).listing(user_id), page)


async def get(session: AsyncSession, *, company_id: int, user_id: int, payee_id: str) -> Payee:
    await users.get_user(session, company_id=company_id, user_id=user_id)
    return await _own(PayeeRepository(session, company_id), user_id, payee_id)


async def delete(
    session: AsyncSession,
    banking: PayeesPort,
    policy: CallPolicy,
    *,
    company_id: int,
    user_id: int,
    payee_id: str,
) -> Payee:
    """Remove the payee at the provider (if it was registered there), then mark it deleted.
    The provider comes first so that a timeout leaves the payee as it was and a retry
    finishes the job."""
    await users.get_user(session, company_id=company_id, user_id=user_id)
    repo = PayeeRepository(session, company_id)
    payee = await _own(repo, user_id, payee_id)
    removed = payee.provider_payee_id
    if removed is None and payee.token_accepted_at is not None:
        # Confirmed, but the registration's answer was lost: the provider may have it.
        key = registration_key(payee)
        found = await commit_then_call(
            session,
            policy,
            provider=PROVIDER,
            operation="payee_by_key",
            call=lambda: banking.payee_by_key(company_id=company_id, idempotency_key=key),
            idempotent=True,
        )
        removed = found.payee_id if found is not None else None
    if removed is not None:
        await _remove_at_provider(session, banking, policy, company_id, removed)
    payee = await _own(repo, user_id, payee_id, lock=True, deleted_too=True)
    if payee.status == PayeeStatus.DELETED.value:  # a concurrent deletion finished first
        return payee
    late = payee.provider_payee_id if payee.provider_payee_id != removed else None
    _wipe(payee, PayeeStatus.DELETED)
    payee.deleted_at = utcnow()
    await _record(session, payee, "payee.deleted")
    if late is not None:  # registered by a confirmation that ran meanwhile
        await _remove_at_provider(session, banking, policy, company_id, late)
    return payee


async def _remove_at_provider(
    session: AsyncSession,
    banking: PayeesPort,
    policy: CallPolicy,
    company_id: int,
    provider_payee_id: str,
) -> None:
    await commit_then_call(
        session,
        policy,
        provider=PROVIDER,
        operation="remove_payee",
        call=lambda: banking.remove_payee(company_id=company_id, payee_id=provider_payee_id),
        idempotent=True,
    )


# ---------------------------------------------------------------------------- for payouts


async def active_payee(
    session: AsyncSession, *, company_id: int, user_id: int, payee_id: str
) -> Payee:
    """The user's payee, usable for a payout: 404 `PAYEE_NOT_FOUND` when unknown, another
    user's or company's, or deleted; 409 `PAYEE_NOT_VERIFIED` unless `ACTIVE`."""
    payee = await _own(PayeeRepository(session, company_id), user_id, payee_id)
    if payee.status != PayeeStatus.ACTIVE.value or payee.provider_payee_id is None:
        raise PayeeNotVerified()
    return payee


# -------------------------------------------------------------------------------- private


async def _own(
    repo: PayeeRepository,
    user_id: int,
    payee_id: str,
    *,
    lock: bool = False,
    deleted_too: bool = False,
) -> Payee:
    payee = await repo.find(payee_id, lock=lock)
    if payee is None or payee.user_id != user_id:
        raise PayeeNotFound()
    if payee.status == PayeeStatus.DELETED.value and not deleted_too:
        raise PayeeNotFound()
    return payee


async def _record(session: AsyncSession, payee: Payee, type_: str) -> None:
    await events.record(
        session,
        company_id=payee.company_id,
        type_=type_,
        domain=EVENT_DOMAIN,
        provider=PROVIDER,
        data={
            "payeeId": payee.id,
            "userId": payee.user_id,
            "status": payee.status,
            "name": payee.name,
            "paymentMethod": payee.payment_method,
            "currency": payee.currency,
            "accountNumberLast4": payee.account_number_last4,
        },
    )


async def banking_account_id(session: AsyncSession, *, company_id: int, user_id: int) -> str:
    """The user's active banking-provider account id (404 user, 409 not active)."""
    account = await accounts.banking_account(session, company_id=company_id, user_id=user_id)
    assert account.provider_account_id is not None
    return account.provider_account_id


async def expire_unconfirmed(session: AsyncSession) -> int:
    """Payees whose verification token expired unconfirmed become `EXPIRED` and lose their
    full account details (maintenance job, every company)."""
    return await repository.expire_unconfirmed(session, now=utcnow())
