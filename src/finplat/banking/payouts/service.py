"""Payouts to verified payees: quote, check, initiate (approval), create.

Flow (spec: "payout flow is quote, check, initiate, create"):
* **check** resolves the terms, asks the provider for the price and compares it with the
  budget's available funds; no side effects.
* **initiate** does the same, refuses insufficient funds (409 `INSUFFICIENT_FUNDS`), and stores
  an approval with the exact terms and price and a one-time token for the user.
* **create** needs that approval, verified and unused, with equal terms. It reserves
  debit + fee in the budget's ledger account (pending transfer to the company's settlement
  account), records a `PENDING` `PAYOUT` transaction, commits (checkpoint), and only then asks
  the provider to pay, with a key derived from the request's Idempotency-Key. The provider's
  answer decides: pending or processing stays `PENDING`; completed posts; a refusal voids and
  fails the payout. A timeout or unavailability is an uncertain outcome: the payout is
  answered `PENDING` with `PROVIDER_OUTCOME_UNCERTAIN`, the reservation stays, and the
  refresher (reconciliation) settles it from the provider's state.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking import accounts
from finplat.banking.accounts import BudgetNotFound
from finplat.banking.models import BankingBalance, BankingBudget
from finplat.banking.payees import service as payees
from finplat.banking.payees.models import Payee
from finplat.banking.payees.repository import PayeeRepository
from finplat.banking.payouts import approvals, settlement
from finplat.banking.payouts.approvals import Terms
from finplat.banking.payouts.models import PayoutApproval
from finplat.banking.payouts.repository import ApprovalRepository, PayoutTransactionRepository
from finplat.banking.repository import BalanceRepository
from finplat.errors import Conflict, NotFound
from finplat.idempotency import service as idempotency
from finplat.idempotency.service import Claim
from finplat.kit.money import from_minor, requested_amount
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.service import CompanyAccount
from finplat.providers.banking.port import BankingProvider, PaymentPrice, ProviderPayment
from finplat.providers.calls import commit_then_call
from finplat.providers.errors import ProviderRejected, ProviderUnavailable
from finplat.providers.names import BankProvider
from finplat.providers.registry import Providers, configured
from finplat.transactions import service as transactions
from finplat.transactions.kinds import FINAL_STATUSES, TransactionStatus, TransactionType
from finplat.transactions.models import Transaction
from finplat.users import service as users

PROVIDER = BankProvider.BANKPROV.value
NO_BANKING = "No banking provider is configured."
INSUFFICIENT_FUNDS = "INSUFFICIENT_FUNDS"
LEDGER_CODE = "banking.payout"
# Recovery points of the create operation (after `started`).
SUBMITTING = "submitting"
REJECTED = "rejected"


class PayoutNotFound(NotFound):
    code = "PAYOUT_NOT_FOUND"
    message = "No payout with that PayoutId for this user."


class PayeeCurrencyMismatch(Conflict):
    code = "PAYEE_CURRENCY_MISMATCH"
    message = "The payee is paid in another currency than `Currency`."


class FundingCurrencyNotInBudget(Conflict):
    code = "CURRENCY_NOT_IN_BUDGET"
    message = "The budget does not hold the funding currency."


@dataclass(frozen=True)
class Resolved:
    """The caller's terms, checked against the user's own account, budget and payee."""

    terms: Terms
    budget: BankingBudget
    balance: BankingBalance  # the budget's balance in the funding currency
    payee: Payee


@dataclass(frozen=True)
class Check:
    price: PaymentPrice
    available_minor: int
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


async def resolve(
    session: AsyncSession,
    *,
    company_id: int,
    user_id: int,
    account_id: str,
    budget_id: str,
    payee_id: str,
    amount: Decimal,
    currency: str,
    from_currency: str | None,
    reference: str | None,
) -> Resolved:
    money = requested_amount(amount, currency)
    account = await accounts.user_account(
        session, company_id=company_id, user_id=user_id, account_id=account_id
    )
    budget = await accounts.user_budget(
        session, company_id=company_id, user_id=user_id, budget_id=budget_id
    )
    if budget.account_id != account.provider_account_id:
        raise BudgetNotFound("No budget with that BudgetId in that account.")
    payee = await payees.active_payee(
        session, company_id=company_id, user_id=user_id, payee_id=payee_id
    )
    if payee.currency != money.currency:
        raise PayeeCurrencyMismatch(
            f"The payee is paid in {payee.currency}; `Currency` is {money.currency}."
        )
    debit_currency = from_currency or money.currency
    balance = await BalanceRepository(session, company_id).of_budget(budget.id, debit_currency)
    if balance is None:
        raise FundingCurrencyNotInBudget(f"The budget does not hold {debit_currency}.")
    terms = Terms(
        account_id=account_id,
        budget_id=budget.id,
        payee_id=payee.id,
        amount_minor=money.minor,
        currency=money.currency,
        debit_currency=debit_currency,
        reference=reference,
    )
    return Resolved(terms=terms, budget=budget, balance=balance, payee=payee)


async def check(
    session: AsyncSession, providers: Providers, *, company_id: int, resolved: Resolved
) -> Check:
    """Quote (provider) and check the funds (ledger). Commits before the provider call."""
    banking = configured(providers.banking, NO_BANKING)
    terms = resolved.terms
    provider_budget_id = resolved.budget.provider_budget_id
    method = resolved.payee.payment_method
    price = await commit_then_call(
        session,
        providers.policy,
        provider=PROVIDER,
        operation="price_payment",
        call=lambda: banking.price_payment(
            company_id=company_id,
            budget_id=provider_budget_id,
            payment_method=method,
            amount_minor=terms.amount_minor,
            currency=terms.currency,
            debit_currency=terms.debit_currency,
        ),
        idempotent=True,
    )
    held = await ledger.balance(
        session, company_id=company_id, account_id=resolved.balance.ledger_account_id
    )
    problems = []
    if held.available < price.debit_amount_minor + price.fee_minor:
        problems.append(INSUFFICIENT_FUNDS)
    return Check(price=price, available_minor=held.available, problems=problems)


async def initiate(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    resolved: Resolved,
) -> tuple[PayoutApproval, str]:
    checked = await check(session, providers, company_id=company_id, resolved=resolved)
    if INSUFFICIENT_FUNDS in checked.problems:
        price = checked.price
        raise ledger.InsufficientFunds(
            f"The budget has {from_minor(checked.available_minor, price.debit_currency)} "
            f"{price.debit_currency} available; the payout needs "
            f"{from_minor(price.debit_amount_minor + price.fee_minor, price.debit_currency)}."
        )
    price = checked.price
    return await approvals.create(
        session,
        company_id=company_id,
        user_id=user_id,
        terms=resolved.terms,
        debit_amount_minor=price.debit_amount_minor,
        fee_minor=price.fee_minor,
        rate=str(price.rate),
    )


async def create(
    session: AsyncSession,
    providers: Providers,
    *,
    claim: Claim,
    company_id: int,
    user_id: int,
    approval_id: str,
    resolve_terms: Callable[[], Awaitable[Resolved]],
) -> Transaction:
    """Create the payout of a verified approval (see the module docstring for the phases)."""
    banking = configured(providers.banking, NO_BANKING)
    if claim.recovery_point == idempotency.STARTED:
        resolved = await resolve_terms()
        approval = await approvals.consume(
            session,
            company_id=company_id,
            user_id=user_id,
            approval_id=approval_id,
            terms=resolved.terms,
        )
        tx = await _reserve(
            session, claim=claim, company_id=company_id, approval=approval, resolved=resolved
        )
        approval.transaction_id = tx.id
        await ApprovalRepository(session, company_id).save(approval)
        await idempotency.checkpoint(session, claim, SUBMITTING, transaction_id=tx.id)
        route: PaymentRoute | None = PaymentRoute.of(resolved.budget, resolved.payee)
    else:
        # Resuming after a crash: commit the key takeover so no lock is held across the call.
        await idempotency.checkpoint(session, claim, claim.recovery_point)
        found = await PayoutTransactionRepository(session, company_id).find(
            int(claim.state["transaction_id"]), fresh=True
        )
        assert found is not None
        tx = found
        if claim.recovery_point == REJECTED:
            raise ProviderRejected(f"The provider refused the payout ({tx.status_reason}).")
        route = None
    return await _submit(
        session, providers, banking, claim=claim, company_id=company_id, tx=tx, route=route
    )


async def _reserve(
    session: AsyncSession,
    *,
    claim: Claim,
    company_id: int,
    approval: PayoutApproval,
    resolved: Resolved,
) -> Transaction:
    """Hold debit + fee in the budget (pending transfer to settlement) and record the payout
    `PENDING`, with the provider key it will be created under."""
    terms = resolved.terms
    debit_currency = terms.debit_currency
    total = approval.debit_amount_minor + approval.fee_minor
    # The budget's account (its balance row names it) and the company's settlement account,
    # read together.
    source_id = resolved.balance.ledger_account_id
    company, by_id = await ledger.company_accounts_and(
        session,
        company_id=company_id,
        kinds=[CompanyAccount.SETTLEMENT],
        currency=debit_currency,
        account_ids=[source_id],
    )
    settlement_account = company[CompanyAccount.SETTLEMENT]
    provider_key = claim.derived_key("create-payment")
    pending = await ledger.create_pending(
        session,
        company_id=company_id,
        legs=[Leg(source_id, -total), Leg(settlement_account.id, total)],
        code=LEDGER_CODE,
        expires_at=None,  # the provider's outcome decides, however long it takes
        reference=provider_key,
        details={"approvalId": approval.id, "payeeId": terms.payee_id},
        accounts=[settlement_account, *by_id.values()],
    )
    payee = resolved.payee
    return await transactions.record(
        session,
        company_id=company_id,
        user_id=approval.user_id,
        type_=TransactionType.PAYOUT,
        status=TransactionStatus.PENDING,
        provider=PROVIDER,
        amount_minor=terms.amount_minor,
        currency=terms.currency,
        budget_id=terms.budget_id,
        fee_minor=approval.fee_minor,
        fee_currency=debit_currency,
        provider_key=provider_key,
        ledger_pending_id=pending.transfer_id,
        metadata={
            "approvalId": approval.id,
            "accountId": terms.account_id,
            "payeeId": payee.id,
            "payeeName": payee.name,
            "accountNumberLast4": payee.account_number_last4,
            "paymentMethod": payee.payment_method,
            "amount": from_minor(terms.amount_minor, terms.currency),
            "currency": terms.currency,
            "debitAmount": from_minor(approval.debit_amount_minor, debit_currency),
            "debitCurrency": debit_currency,
            "fee": from_minor(approval.fee_minor, debit_currency),
            "exchangeRate": approval.rate,
            "reference": terms.reference,
            "paymentBatchId": None,
        },
    )


async def _submit(
    session: AsyncSession,
    providers: Providers,
    banking: BankingProvider,
    *,
    claim: Claim,
    company_id: int,
    tx: Transaction,
    route: PaymentRoute | None,
) -> Transaction:
    """Ask the provider to pay (no lock held), then apply its answer. `route`: the budget and
    payee at the provider, when the request has just read them (a resumed one reads them
    again)."""
    if TransactionStatus(tx.status) in FINAL_STATUSES:
        # Resumed after reconciliation already decided it: never pay a settled payout again.
        return tx
    meta = transactions.metadata_of(tx)
    tx_id = tx.id
    provider_key = tx.provider_key
    assert provider_key is not None
    if route is None:
        route = await _route_of(session, company_id, tx, str(meta["payeeId"]))
    provider_budget_id, provider_payee_id = route.budget_id, route.payee_id
    amount_minor, currency = tx.amount_minor, tx.currency
    debit_currency = str(meta["debitCurrency"])
    reference = meta.get("reference")
    try:
        payment: ProviderPayment = await commit_then_call(
            session,
            providers.policy,
            provider=PROVIDER,
            operation="create_payment",
            call=lambda: banking.create_payment(
                company_id=company_id,
                idempotency_key=provider_key,
                budget_id=provider_budget_id,
                payee_id=provider_payee_id,
                amount_minor=amount_minor,
                currency=currency,
                debit_currency=debit_currency,
                reference=reference,
            ),
            idempotent=True,
        )
    except ProviderUnavailable:
        # Timeout or outage: the provider may have accepted it. Keep the reservation and let
        # reconciliation decide; never report it completed.
        return await settlement.mark_uncertain(session, company_id=company_id, tx_id=tx_id)
    except ProviderRejected as refusal:
        await settlement.fail(session, company_id=company_id, tx_id=tx_id, reason=refusal.code)
        await idempotency.checkpoint(session, claim, REJECTED)
        raise
    await settlement.apply(session, company_id=company_id, tx_id=tx_id, payment=payment)
    # `apply` re-read this very object under its lock (the session holds one per row) and
    # wrote what it changed: it is the payout as stored.
    return tx


@dataclass(frozen=True)
class PaymentRoute:
    """Where the provider pays from and to: its own ids of the budget and the payee."""

    budget_id: str
    payee_id: str

    @classmethod
    def of(cls, budget: BankingBudget, payee: Payee) -> PaymentRoute:
        assert payee.provider_payee_id is not None
        return cls(budget.provider_budget_id, payee.provider_payee_id)


async def _route_of(
    session: AsyncSession, company_id: int, tx: Transaction, payee_id: str
) -> PaymentRoute:
    budget = await accounts.find_budget(
        session, company_id=company_id, budget_id=tx.budget_id or ""
    )
    assert budget is not None
    payee = await PayeeRepository(session, company_id).find(payee_id)
    assert payee is not None
    return PaymentRoute.of(budget, payee)


async def get_payout(
    session: AsyncSession, *, company_id: int, user_id: int, payout_id: int
) -> Transaction:
    """The user's payout; 404 `USER_NOT_FOUND` for an unknown user, else `PAYOUT_NOT_FOUND`."""
    tx = await PayoutTransactionRepository(session, company_id).find(payout_id)
    if tx is None or tx.user_id != user_id:
        await users.get_user(session, company_id=company_id, user_id=user_id)
        raise PayoutNotFound()
    return tx
