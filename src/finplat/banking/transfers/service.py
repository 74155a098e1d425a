"""Budget transfers (between two budgets of a user's banking-provider account) and
user-to-master transfers (from a budget to the company's master account).

Rules (spec: Errors, Limits, Idempotency; issue 6 item 5):
* The caller names the target user (`userId`); `AccountId`, the source budget and the
  destination budget must all belong to that user's banking-provider account. An id the
  company does not know is 404; one that exists in the company but belongs to another user or
  account is 403 `CROSS_ACCOUNT_TRANSFER_NOT_ALLOWED`.
* An amount with more decimals than its currency allows (2; 6 for USDC and USDT) is 400
  `INVALID_TRANSFER_REQUEST`, never rounded.
* Money: reserve source → destination in the ledger, record a PENDING transaction and commit,
  call the provider (keyed, so a retry is deduplicated there), then post and complete. A lost
  or pending answer keeps the reservation and the PENDING transaction for the refresher; a
  refusal releases it and fails the transaction.
* `ExternalReferenceId` (user-to-master only): the same reference with the same terms returns
  the first result; other terms are 400 `REFERENCE_REUSED_WITH_DIFFERENT_TERMS`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

import structlog
from fastapi.responses import JSONResponse
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking import accounts
from finplat.banking.models import BankingBalance, BankingBudget
from finplat.banking.transfers.schemas import MASTER, BudgetTransferResponse
from finplat.errors import ApiError, Conflict, error_response
from finplat.idempotency import service as idempotency
from finplat.idempotency.service import Claim
from finplat.kit.clock import utcnow
from finplat.kit.money import Money, exact_json_numbers, requested_amount
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.service import CompanyAccount
from finplat.providers.banking.port import BankingProvider, ProviderTransfer, ProviderTransferStatus
from finplat.providers.calls import CallPolicy, commit_then_call
from finplat.providers.errors import ProviderRejected, ProviderUnavailable
from finplat.providers.names import BankProvider
from finplat.provisioning import statuses
from finplat.provisioning.models import ProviderAccount
from finplat.provisioning.repository import ProviderAccountRepository
from finplat.transactions import service as transactions
from finplat.transactions.kinds import TransactionStatus, TransactionType
from finplat.transactions.models import Transaction
from finplat.users import service as users

log = structlog.get_logger("finplat.banking.transfers")

PROVIDER = BankProvider.BANKPROV.value
REFERENCE_SCOPE = "user-to-master-transfer"
RESERVED = "reserved"
REJECTED = "rejected"
# A transfer the provider still has not received this long after it was reserved never will
# be: the platform calls the provider only within `CALL_WINDOW` of the reservation.
NEVER_RECEIVED_AFTER = timedelta(minutes=10)
CALL_WINDOW = timedelta(minutes=5)
JSON = "application/json"


class InvalidTransferRequest(ApiError):
    status = 400
    code = "INVALID_TRANSFER_REQUEST"
    message = "The transfer request is not valid."


class CrossAccountTransfer(ApiError):
    # The spec names the code, not the status. 403, not 400: the request is well formed and
    # every id is the company's; moving money between these accounts is what is refused.
    status = 403
    code = "CROSS_ACCOUNT_TRANSFER_NOT_ALLOWED"
    message = (
        "AccountId, the source budget and the destination budget must all belong to the "
        "target user's banking account."
    )


class SameBudget(Conflict):
    code = "SAME_BUDGET"
    message = "The source and destination budgets are the same."


class CurrencyNotInBudget(Conflict):
    code = "CURRENCY_NOT_IN_BUDGET"
    message = "The budget does not hold that currency."


class TransferRejected(ApiError):
    """The provider's refusal, replayed when a rejected operation is resumed."""


@dataclass(frozen=True)
class TransferOrder:
    """A validated transfer: every identifier resolved to the target user's own objects."""

    company_id: int
    user_id: int
    account: ProviderAccount
    source: BankingBudget
    source_balance: BankingBalance
    destination: BankingBudget | None  # None: the company's master account
    destination_balance: BankingBalance | None
    money: Money
    external_reference_id: str | None
    reference: str | None

    @property
    def type_(self) -> TransactionType:
        return (
            TransactionType.MASTER_TRANSFER
            if self.destination is None
            else TransactionType.BUDGET_TRANSFER
        )

    @property
    def account_id(self) -> str:
        assert self.account.provider_account_id is not None
        return self.account.provider_account_id

    def terms(self) -> dict[str, Any]:
        """What a reused `ExternalReferenceId` must repeat to get the first result."""
        return {
            "userId": self.user_id,
            "accountId": self.account_id,
            "budgetId": self.source.id,
            "currency": self.money.currency,
            "amountMinor": self.money.minor,
        }


def transfer_money(amount: Decimal, currency: str) -> Money:
    """The amount in minor units; more decimals than the currency allows is 400
    `INVALID_TRANSFER_REQUEST` (the spec's code, not `INVALID_AMOUNT`)."""
    return requested_amount(amount, currency, error=InvalidTransferRequest)


async def resolve(
    session: AsyncSession,
    *,
    company_id: int,
    user_id: int,
    account_id: str,
    source_budget_id: str,
    destination_budget_id: str | None,
    money: Money,
    external_reference_id: str | None,
    reference: str | None,
) -> TransferOrder:
    """Check who owns every identifier (reads only)."""
    account = await ProviderAccountRepository(session, company_id).by_provider_account(
        PROVIDER, account_id
    )
    if account is None or account.user_id != user_id:
        # 404 `USER_NOT_FOUND` comes first; the user of an account of the company exists.
        await users.get_user(session, company_id=company_id, user_id=user_id)
    if account is None:
        raise accounts.AccountNotFound("No banking account with that AccountId in this company.")
    if account.user_id != user_id:
        raise CrossAccountTransfer(validation_errors={"AccountId": ["Not the user's account."]})
    if account.status != statuses.APPROVED_BANKPROV:
        raise accounts.BankingNotActive()
    wanted = [source_budget_id]
    if destination_budget_id is not None:
        wanted.append(destination_budget_id)
    found = await accounts.find_budgets(session, company_id=company_id, budget_ids=wanted)
    source = _own_budget(found, account=account, budget_id=source_budget_id, field="BudgetId")
    destination = (
        _own_budget(
            found, account=account, budget_id=destination_budget_id, field="DestinationBudgetId"
        )
        if destination_budget_id is not None
        else None
    )
    if destination is not None and destination.id == source.id:
        raise SameBudget()
    held = await accounts.budget_balances(
        session, company_id=company_id, budget_ids=list(found), currency=money.currency
    )
    source_balance = _balance(held, source, money.currency)
    destination_balance = (
        _balance(held, destination, money.currency) if destination is not None else None
    )
    return TransferOrder(
        company_id=company_id,
        user_id=user_id,
        account=account,
        source=source,
        source_balance=source_balance,
        destination=destination,
        destination_balance=destination_balance,
        money=money,
        external_reference_id=external_reference_id,
        reference=reference,
    )


def _own_budget(
    found: dict[str, BankingBudget], *, account: ProviderAccount, budget_id: str, field: str
) -> BankingBudget:
    budget = found.get(budget_id)
    if budget is None:
        raise accounts.BudgetNotFound(
            "No budget with that id in this company.",
            validation_errors={field: ["Unknown budget."]},
        )
    if budget.user_id != account.user_id or budget.account_id != account.provider_account_id:
        raise CrossAccountTransfer(validation_errors={field: ["Not a budget of the account."]})
    return budget


def _balance(
    held: dict[str, BankingBalance], budget: BankingBudget, currency: str
) -> BankingBalance:
    balance = held.get(budget.id)
    if balance is None:
        raise CurrencyNotInBudget(f"The budget {budget.id} does not hold {currency}.")
    return balance


# ---------------------------------------------------------------------------------- claims


def reference_key(external_reference_id: str) -> str:
    """The idempotency key of a reference (references may hold any text; keys are ASCII)."""
    return hashlib.sha256(external_reference_id.encode()).hexdigest()


async def claim_reference(session: AsyncSession, claim: Claim, order: TransferOrder) -> Claim:
    """Claim the order's `ExternalReferenceId` (or raise the first result / 400 / 409).

    The request's own claim is committed first: claiming may wait for a concurrent request,
    ending the transaction between polls, which must not lose the request's claim.
    """
    assert order.external_reference_id is not None
    await idempotency.checkpoint(session, claim, claim.recovery_point)
    try:
        return await idempotency.claim_reference(
            session,
            company_id=order.company_id,
            scope=REFERENCE_SCOPE,
            reference=reference_key(order.external_reference_id),
            terms=order.terms(),
        )
    except idempotency.StoredResponse as stored:
        # The request's key gets the same final answer as the reference.
        await idempotency.complete(
            session,
            claim,
            status=stored.status,
            body=stored.body,
            content_type=stored.content_type,
        )
        await session.commit()
        raise


# ----------------------------------------------------------------------------------- money


async def execute(
    session: AsyncSession,
    banking: BankingProvider,
    policy: CallPolicy,
    *,
    claim: Claim,
    reference_claim: Claim | None,
    order: TransferOrder,
) -> bytes:
    """Run (or resume) the transfer; returns the rendered 201 body (also stored as the
    reference's first result)."""
    # The reference first: it is what a retry under another Idempotency-Key resumes from.
    claims = [c for c in (reference_claim, claim) if c is not None]
    state: dict[str, Any] = {}
    for c in claims:
        state.update(c.state)
    if state.get("error"):
        error = state["error"]
        raise TransferRejected(error["message"], status=error["status"], code=error["code"])
    reservation: ledger.Reservation | None = None
    if "transaction_id" in state:
        tx = await transactions.get(
            session, company_id=order.company_id, transaction_id=int(state["transaction_id"])
        )
        resumed = True
    else:
        key_claim = reference_claim or claim
        tx, reservation = await _reserve(
            session, order, provider_key=key_claim.derived_key("budget-transfer")
        )
        resumed = False
    for c in claims:
        await idempotency.checkpoint(session, c, RESERVED, transaction_id=tx.id)
    if tx.status == TransactionStatus.PENDING.value:
        if resumed and utcnow() - tx.created_at >= CALL_WINDOW:
            await refresh(session, banking, policy, tx)
        else:
            try:
                await _call_provider(session, banking, policy, order, tx, reservation)
            except ProviderRejected as refusal:
                await _fail(session, tx, refusal.message)
                if reference_claim is not None:
                    # The reference's first result is the refusal, as for the request's key.
                    rendered = error_response(refusal)
                    await idempotency.complete(
                        session,
                        reference_claim,
                        status=refusal.status,
                        body=bytes(rendered.body),
                        content_type=JSON,
                    )
                error = {"status": refusal.status, "code": refusal.code, "message": refusal.message}
                await idempotency.checkpoint(session, claim, REJECTED, error=error)
                raise
    body = render(tx)
    if reference_claim is not None:
        await idempotency.complete(
            session, reference_claim, status=201, body=body, content_type=JSON
        )
    return body


def render(tx: Transaction) -> bytes:
    """The response body exactly as the route writes it (exact JSON numbers)."""
    content = BudgetTransferResponse.of(tx).model_dump(mode="json")
    return exact_json_numbers(bytes(JSONResponse(content).body))


async def _reserve(
    session: AsyncSession, order: TransferOrder, *, provider_key: str
) -> tuple[Transaction, ledger.Reservation]:
    """Reserve the amount (raises `InsufficientFunds`, nothing written) and record the
    PENDING transaction."""
    if order.destination_balance is not None:
        target = order.destination_balance.ledger_account_id
    else:
        master = await ledger.company_account(
            session,
            company_id=order.company_id,
            kind=CompanyAccount.MASTER,
            currency=order.money.currency,
        )
        target = master.id
    code = "banking.master_transfer" if order.destination is None else "banking.budget_transfer"
    reservation = await ledger.reserve(
        session,
        company_id=order.company_id,
        legs=[
            Leg(order.source_balance.ledger_account_id, -order.money.minor),
            Leg(target, order.money.minor),
        ],
        code=code,
        expires_at=None,  # held until the provider's answer settles it
        reference=provider_key,
    )
    tx = await transactions.record(
        session,
        company_id=order.company_id,
        user_id=order.user_id,
        type_=order.type_,
        status=TransactionStatus.PENDING,
        provider=PROVIDER,
        amount_minor=order.money.minor,
        currency=order.money.currency,
        budget_id=order.source.id,
        provider_key=provider_key,
        ledger_pending_id=reservation.result.transfer_id,
        metadata={
            "accountId": order.account_id,
            "fromBudgetId": order.source.id,
            "toBudgetId": order.destination.id if order.destination is not None else MASTER,
            "externalReferenceId": order.external_reference_id,
            "reference": order.reference,
        },
    )
    return tx, reservation


async def _call_provider(
    session: AsyncSession,
    banking: BankingProvider,
    policy: CallPolicy,
    order: TransferOrder,
    tx: Transaction,
    reservation: ledger.Reservation | None,
) -> None:
    """Ask the provider to move the money and settle from its answer; a refusal
    (`ProviderRejected`) is raised to the caller. `reservation`: the transfer's, when this
    request made it."""
    assert tx.provider_key is not None
    key = tx.provider_key
    try:
        result = await commit_then_call(
            session,
            policy,
            provider=PROVIDER,
            operation="transfer",
            call=lambda: banking.transfer(
                company_id=order.company_id,
                idempotency_key=key,
                from_budget_id=order.source.provider_budget_id,
                to_budget_id=(
                    order.destination.provider_budget_id if order.destination is not None else None
                ),
                currency=order.money.currency,
                amount_minor=order.money.minor,
            ),
            idempotent=True,
        )
    except ProviderUnavailable:
        # Uncertain: the reservation and the PENDING transaction stay for the refresher.
        log.warning("transfer_outcome_unknown", transaction_id=tx.id)
        return
    await apply_outcome(session, tx, result, reservation=reservation)


async def _fail(session: AsyncSession, tx: Transaction, reason: str) -> None:
    await session.refresh(tx, with_for_update=True)
    if tx.status != TransactionStatus.PENDING.value:
        return
    assert tx.ledger_pending_id is not None
    await ledger.void_pending(session, company_id=tx.company_id, pending_id=tx.ledger_pending_id)
    await transactions.settle(session, tx, status=TransactionStatus.FAILED, reason=reason)


async def apply_outcome(
    session: AsyncSession,
    tx: Transaction,
    found: ProviderTransfer | None,
    *,
    reservation: ledger.Reservation | None = None,
) -> None:
    """Settle the transaction and its reservation from the provider's answer (locks the
    transaction first, so the request and a refresher settle it once between them).
    `reservation`: the ledger's pending transfer as the request made it (`post_pending`
    then need not read it again)."""
    await session.refresh(tx, with_for_update=True)
    if tx.status != TransactionStatus.PENDING.value:
        return
    assert tx.ledger_pending_id is not None
    if found is None:
        if utcnow() - tx.created_at >= NEVER_RECEIVED_AFTER:
            await _fail(session, tx, "The banking provider never received the transfer.")
        return
    if found.status is ProviderTransferStatus.COMPLETED:
        await ledger.post_pending(
            session,
            company_id=tx.company_id,
            pending_id=tx.ledger_pending_id,
            details={"provider_reference": found.transfer_id},
            reservation=reservation,
        )
        await transactions.settle(
            session,
            tx,
            status=TransactionStatus.COMPLETED,
            provider_reference=found.transfer_id,
        )
    elif found.status is ProviderTransferStatus.FAILED:
        tx.provider_reference = found.transfer_id
        await _fail(session, tx, found.reason or "The banking provider refused the transfer.")
    elif tx.provider_reference is None:
        tx.provider_reference = found.transfer_id
        await session.flush()


async def refresh(
    session: AsyncSession, banking: BankingProvider | None, policy: CallPolicy, tx: Transaction
) -> None:
    """Ask the provider about a PENDING transfer and settle it (flushes only)."""
    if banking is None or tx.provider_key is None:
        return
    company_id, key = tx.company_id, tx.provider_key
    try:
        found = await commit_then_call(
            session,
            policy,
            provider=PROVIDER,
            operation="transfer_status",
            call=lambda: banking.transfer_by_key(company_id=company_id, idempotency_key=key),
            idempotent=True,
        )
    except (ProviderUnavailable, ProviderRejected) as exc:
        # The stored status stands until the provider answers.
        log.warning("transfer_status_unavailable", transaction_id=tx.id, code=exc.code)
        return
    await apply_outcome(session, tx, found)
