"""Payment requests: a user asks to be paid an exact amount into one of their budgets.

Rules:
* Create: the user's budget (`BudgetId`, or the user's default budget) must hold `Currency`
  (409 `CURRENCY_NOT_IN_BUDGET`); `ExpiresAt` lies between one minute and 90 days ahead
  (default 7 days). The request is issued at the banking provider first (keyed by the call's
  Idempotency-Key, so a retry after a lost answer issues nothing twice), then recorded
  `PENDING` with the event `payment_request.created`.
* Paid: only the provider decides. A payer pays in full or not at all, before the expiry; the
  provider reports `payment_request.paid`, and the platform posts the amount from the
  settlement account to the budget once (a `COMPLETED` `INCOMING_PAYMENT` transaction), marks
  the request `PAID` and records `payment_request.paid`.
* Expiry: a pending request whose `ExpiresAt` has passed is `EXPIRED` (event
  `payment_request.expired`), stored when it is next read or cancelled, or by the maintenance
  job, whichever comes first. The provider refuses payments from `ExpiresAt` on, by the same
  clock. A payment the provider accepted before the expiry but reported after the platform
  expired the request still lands: money that arrived is never refused, so the request turns
  `PAID`.
* Cancel: only a `PENDING` request (409 `PAYMENT_REQUEST_NOT_PENDING` otherwise). The provider
  cancels it first, so no payer can pay it afterwards; if the payer was faster the provider
  refuses, and the answer is 409 `PAYMENT_REQUEST_NOT_PENDING` (the payment is applied by its
  callback). Event `payment_request.cancelled`.
* Another company's request answers exactly like one that does not exist (404
  `PAYMENT_REQUEST_NOT_FOUND`).
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta
from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking import accounts, budgets
from finplat.errors import Conflict, NotFound, ValidationFailed
from finplat.events import service as events
from finplat.idempotency.service import Claim
from finplat.kit.clock import utcnow
from finplat.kit.money import Money, from_minor
from finplat.kit.pagination import PageRequest, PageSlice
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.payments.budgets import user_budget
from finplat.payments.requests import repository
from finplat.payments.requests.models import PaymentRequest, PaymentRequestStatus
from finplat.payments.requests.repository import PaymentRequestRepository
from finplat.providers.banking.port import (
    REQUEST_ALREADY_PAID,
    ProviderPaymentRequest,
    ProviderRequestStatus,
)
from finplat.providers.calls import commit_then_call
from finplat.providers.errors import ProviderRejected
from finplat.providers.names import BankProvider
from finplat.providers.registry import Providers, configured
from finplat.transactions import service as transactions
from finplat.transactions.kinds import TransactionStatus, TransactionType
from finplat.users import service as users

log = structlog.get_logger("finplat.payments.requests")

PROVIDER = BankProvider.BANKPROV.value
NO_BANKING = "No banking provider is configured."
REQUEST_ID_PATTERN = r"^prq_[0-9a-f]{24}$"
DEFAULT_LIFETIME = timedelta(days=7)
MIN_LIFETIME = timedelta(minutes=1)
MAX_LIFETIME = timedelta(days=90)
EVENT_DOMAIN = "payment_request"
LEDGER_CODE = "payments.request"
EXPIRY_BATCH = 500


class PaymentRequestNotFound(NotFound):
    code = "PAYMENT_REQUEST_NOT_FOUND"
    message = "No payment request with that id."


class PaymentRequestNotPending(Conflict):
    code = "PAYMENT_REQUEST_NOT_PENDING"
    message = "Only a pending payment request can be cancelled."


class PaymentReportConflict(Conflict):
    code = "PAYMENT_REQUEST_REPORT_CONFLICT"
    message = "The provider reported another payment for this request; the first stands."


def new_request_id() -> str:
    return f"prq_{secrets.token_hex(12)}"


def payment_key(payment_id: str) -> str:
    """The transaction's provider key for the payment that paid a request (fixed length,
    distinct from the keys of other incoming payments)."""
    digest = hashlib.sha256(f"payment_request.paid\x1f{payment_id}".encode()).hexdigest()
    return f"prq_{digest[:40]}"


def check_expiry(expires_at: datetime | None, now: datetime) -> datetime:
    if expires_at is None:
        return now + DEFAULT_LIFETIME
    if expires_at.tzinfo is None:
        raise ValidationFailed(
            "`ExpiresAt` needs a time zone.",
            validation_errors={"ExpiresAt": ["Give a time zone, e.g. 2026-12-01T12:00:00Z."]},
        )
    if not now + MIN_LIFETIME <= expires_at <= now + MAX_LIFETIME:
        raise ValidationFailed(
            "`ExpiresAt` must lie between one minute and 90 days from now.",
            validation_errors={"ExpiresAt": ["Between one minute and 90 days from now."]},
        )
    return expires_at


async def create(
    session: AsyncSession,
    providers: Providers,
    *,
    claim: Claim,
    company_id: int,
    user_id: int,
    money: Money,
    description: str | None,
    budget_id: str | None,
    expires_at: datetime | None,
) -> PaymentRequest:
    """Issue the request at the provider, then record it `PENDING` (see the module rules)."""
    banking = configured(providers.banking, NO_BANKING)
    expiry = check_expiry(expires_at, utcnow())
    # The budget's resolution answers an unknown user (404 `USER_NOT_FOUND`).
    budget = await user_budget(
        session, providers, company_id=company_id, user_id=user_id, budget_id=budget_id
    )
    await accounts.budget_balance(
        session, company_id=company_id, budget=budget, currency=money.currency
    )
    provider_budget_id, platform_budget_id = budget.provider_budget_id, budget.id
    key = claim.derived_key("create-payment-request")
    issued: ProviderPaymentRequest = await commit_then_call(
        session,
        providers.policy,
        provider=PROVIDER,
        operation="create_payment_request",
        call=lambda: banking.create_payment_request(
            company_id=company_id,
            idempotency_key=key,
            budget_id=provider_budget_id,
            currency=money.currency,
            amount_minor=money.minor,
            expires_at=expiry,
            description=description,
        ),
        idempotent=True,
    )
    request = await PaymentRequestRepository(session, company_id).create(
        {
            "id": new_request_id(),
            "user_id": user_id,
            "budget_id": platform_budget_id,
            "amount_minor": money.minor,
            "currency": money.currency,
            "description": description,
            "status": PaymentRequestStatus.PENDING.value,
            "expires_at": issued.expires_at,
            "provider": PROVIDER,
            "provider_request_id": issued.request_id,
        }
    )
    await _event(session, request, "payment_request.created")
    return request


async def get(
    session: AsyncSession, *, company_id: int, request_id: str, fresh: bool = False
) -> PaymentRequest:
    """The request, expired first if its time has passed (404 for another company's)."""
    request = await PaymentRequestRepository(session, company_id).find(request_id, fresh=fresh)
    if request is None:
        raise PaymentRequestNotFound()
    return await _expire_if_due(session, request)


async def page(
    session: AsyncSession,
    *,
    company_id: int,
    page_request: PageRequest,
    user_id: int | None,
    status: PaymentRequestStatus | None,
    budget_id: str | None,
) -> PageSlice[PaymentRequest]:
    """The company's requests, newest first; a `userId` must be the company's (404)."""
    if user_id is not None:
        await users.get_user(session, company_id=company_id, user_id=user_id)
    if status is PaymentRequestStatus.PENDING or status is PaymentRequestStatus.EXPIRED:
        # So the filter sees what a read would: requests past their expiry are EXPIRED.
        await expire_due(session, company_id=company_id)
    found = await PaymentRequestRepository(session, company_id).page(
        page_request, user_id=user_id, status=status, budget_id=budget_id
    )
    rows = [await _expire_if_due(session, row) for row in found.rows]
    return PageSlice(rows=rows, has_more=found.has_more)


async def cancel(
    session: AsyncSession, providers: Providers, *, company_id: int, request_id: str
) -> PaymentRequest:
    """Cancel a pending request at the provider, then here (see the module rules)."""
    banking = configured(providers.banking, NO_BANKING)
    request = await get(session, company_id=company_id, request_id=request_id)
    _require_pending(request)
    provider_request_id = request.provider_request_id
    try:
        answer = await commit_then_call(
            session,
            providers.policy,
            provider=PROVIDER,
            operation="cancel_payment_request",
            call=lambda: banking.cancel_payment_request(
                company_id=company_id, request_id=provider_request_id
            ),
            idempotent=True,
        )
    except ProviderRejected as refusal:
        if refusal.code == REQUEST_ALREADY_PAID:
            raise PaymentRequestNotPending(
                "The payer has already paid this payment request."
            ) from None
        raise
    locked = await PaymentRequestRepository(session, company_id).find(request_id, lock=True)
    assert locked is not None
    _require_pending(locked)  # a payment's callback may have been applied meanwhile
    if answer.status is not ProviderRequestStatus.CANCELLED:
        raise PaymentRequestNotPending(f"The payment request is {answer.status.value}.")
    now = utcnow()
    locked.status = PaymentRequestStatus.CANCELLED.value
    locked.cancelled_at = now
    locked.updated_at = now
    await session.flush()
    await _event(session, locked, "payment_request.cancelled")
    return locked


async def refresh(
    session: AsyncSession, providers: Providers, *, company_id: int, request_id: str
) -> PaymentRequest:
    """Ask the provider about a pending request and apply what it decided (reconciliation:
    a lost `payment_request.paid` callback still credits the budget, once)."""
    banking = configured(providers.banking, NO_BANKING)
    request = await get(session, company_id=company_id, request_id=request_id)
    if request.status != PaymentRequestStatus.PENDING.value:
        return request
    provider_request_id = request.provider_request_id
    answer = await commit_then_call(
        session,
        providers.policy,
        provider=PROVIDER,
        operation="payment_request_status",
        call=lambda: banking.payment_request(company_id=company_id, request_id=provider_request_id),
        idempotent=True,
    )
    if answer.status is ProviderRequestStatus.PAID and answer.payment_id is not None:
        await apply_payment(
            session,
            company_id=company_id,
            provider_request_id=provider_request_id,
            payment_id=answer.payment_id,
            currency=answer.currency,
            amount_minor=answer.amount_minor,
            payer_name=None,
            paid_at=answer.paid_at,
        )
    elif answer.status is ProviderRequestStatus.CANCELLED:
        # Our cancel reached the provider but its own commit was lost: finish it.
        locked = await PaymentRequestRepository(session, company_id).find(request_id, lock=True)
        assert locked is not None
        if locked.status == PaymentRequestStatus.PENDING.value:
            now = utcnow()
            locked.status = PaymentRequestStatus.CANCELLED.value
            locked.cancelled_at = now
            locked.updated_at = now
            await session.flush()
            await _event(session, locked, "payment_request.cancelled")
    return await get(session, company_id=company_id, request_id=request_id, fresh=True)


async def apply_payment(
    session: AsyncSession,
    *,
    company_id: int,
    provider_request_id: str,
    payment_id: str,
    currency: str,
    amount_minor: int,
    payer_name: str | None,
    paid_at: datetime | None,
) -> PaymentRequest | None:
    """The provider says a payer paid the request: credit the budget once and mark it `PAID`.
    None when the platform has no such request (logged). A repeat of the same payment is
    acknowledged without effect; another payment, amount or currency is refused."""
    repo = PaymentRequestRepository(session, company_id)
    request = await repo.by_provider_request(PROVIDER, provider_request_id, lock=True)
    if request is None:
        log.warning("payment_for_unknown_request")
        return None
    if request.status == PaymentRequestStatus.PAID.value:
        if request.provider_payment_id != payment_id:
            log.warning("payment_request_paid_twice", request_id=request.id)
            raise PaymentReportConflict()
        return request
    if (request.currency, request.amount_minor) != (currency, amount_minor):
        log.warning(
            "payment_request_amount_conflict",
            request_id=request.id,
            reported_currency=currency,
            reported_amount_minor=amount_minor,
        )
        raise PaymentReportConflict()
    if request.status != PaymentRequestStatus.PENDING.value:
        # Accepted by the provider before it expired (or was cancelled there): the money
        # arrived, so it lands and the request is paid.
        log.info("payment_request_paid_after_local_state", request_id=request.id)
    accounts = await budgets.with_settlement(
        session, company_id=company_id, budget_id=request.budget_id, currency=currency
    )
    target, settlement = accounts
    posted = await ledger.post_transfer(
        session,
        company_id=company_id,
        legs=[Leg(settlement.id, -amount_minor), Leg(target.id, amount_minor)],
        code=LEDGER_CODE,
        reference=payment_id,
        details={"paymentRequestId": request.id},
        accounts=accounts,
    )
    transaction = await transactions.record(
        session,
        company_id=company_id,
        user_id=request.user_id,
        type_=TransactionType.INCOMING_PAYMENT,
        status=TransactionStatus.COMPLETED,
        provider=PROVIDER,
        amount_minor=amount_minor,
        currency=currency,
        budget_id=request.budget_id,
        provider_reference=payment_id,
        provider_key=payment_key(payment_id),
        metadata={
            "scheme": "PAYMENT_REQUEST",
            "senderName": payer_name,
            "reference": request.description,
            "paymentRequestId": request.id,
            "ledgerTransferId": posted.transfer_id,
        },
    )
    now = utcnow()
    request.status = PaymentRequestStatus.PAID.value
    request.provider_payment_id = payment_id
    request.payer_name = payer_name
    request.transaction_id = transaction.id
    request.paid_at = paid_at or now
    request.updated_at = now
    await repo.save(request)
    await _event(session, request, "payment_request.paid")
    return request


async def expire_due(session: AsyncSession, *, company_id: int | None = None) -> int:
    """Store `EXPIRED` on pending requests past their expiry (of one company, or of all for
    the maintenance job); returns how many."""
    now = utcnow()
    due = await repository.due_for_expiry(
        session, now=now, limit=EXPIRY_BATCH, company_id=company_id
    )
    expired = 0
    for owner, request_id in due:
        locked = await PaymentRequestRepository(session, owner).find(request_id, lock=True)
        if locked is not None and await _expire_locked(session, locked, now):
            expired += 1
    return expired


async def _expire_if_due(session: AsyncSession, request: PaymentRequest) -> PaymentRequest:
    now = utcnow()
    if request.status != PaymentRequestStatus.PENDING.value or now < request.expires_at:
        return request
    locked = await PaymentRequestRepository(session, request.company_id).find(request.id, lock=True)
    assert locked is not None
    await _expire_locked(session, locked, now)
    return locked


async def _expire_locked(session: AsyncSession, request: PaymentRequest, now: datetime) -> bool:
    if request.status != PaymentRequestStatus.PENDING.value or now < request.expires_at:
        return False
    request.status = PaymentRequestStatus.EXPIRED.value
    request.expired_at = now
    request.updated_at = now
    await session.flush()
    await _event(session, request, "payment_request.expired")
    return True


def _require_pending(request: PaymentRequest) -> None:
    if request.status != PaymentRequestStatus.PENDING.value:
        raise PaymentRequestNotPending(f"The payment request is {request.status}.")


async def _event(session: AsyncSession, request: PaymentRequest, type_: str) -> None:
    data: dict[str, Any] = {
        "paymentRequestId": request.id,
        "userId": request.user_id,
        "budgetId": request.budget_id,
        "status": request.status,
        "amount": from_minor(request.amount_minor, request.currency),
        "currency": request.currency,
        "expiresAt": request.expires_at.isoformat(),
        "transactionId": request.transaction_id,
    }
    await events.record(
        session,
        company_id=request.company_id,
        type_=type_,
        domain=EVENT_DOMAIN,
        provider=PROVIDER,
        data=data,
    )
