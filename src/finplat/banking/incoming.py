"""Money arriving in a budget from outside (SEPA or FPS credits), reported by the banking
provider's `payment.received` callback.

The provider has already credited its balance, so the ledger posts settlement → budget at
once, records a `COMPLETED` `INCOMING_PAYMENT` transaction and a `payment.received` event.

A payment credits once per provider `paymentId`, whatever event ids it arrives under: inbound
deduplication only stops the same event id, and a provider may send the same payment again
under a new one. The transaction carries a provider key derived from the payment id, which is
unique per company and provider; it is recorded before the ledger posts, so a repeat (also one
running in parallel) finds it and applies nothing. A repeat that reports another amount or
currency for the same `paymentId` is not the same payment: 409 `INCOMING_PAYMENT_CONFLICT`,
logged, and the first stands.

The data is read with `PaymentReceived` before anything is written: ids within their columns,
a currency a budget holds, a positive whole number of minor units within `MAX_INCOMING_MINOR`.
Anything else is 400 `MALFORMED_CALLBACK` (see `providers.inbound`).
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any

import structlog
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking import budgets
from finplat.banking.schemas import BudgetCurrency
from finplat.errors import Conflict
from finplat.events import service as events
from finplat.kit.fields import SafeText
from finplat.kit.money import from_minor
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.providers import inbound
from finplat.providers.banking.port import PAYMENT_RECEIVED
from finplat.providers.names import BankProvider, ExternalProvider
from finplat.provisioning import service as provisioning
from finplat.transactions import service as transactions
from finplat.transactions.kinds import TransactionStatus, TransactionType
from finplat.transactions.models import Transaction

log = structlog.get_logger("finplat.banking")
PROVIDER = BankProvider.BANKPROV.value


def payment_key(payment_id: str) -> str:
    """The provider key of the incoming payment `payment_id` (fixed length, whatever the
    provider's id; distinct from the `fp_` keys the platform gives the provider)."""
    digest = hashlib.sha256(f"{PAYMENT_RECEIVED}\x1f{payment_id}".encode()).hexdigest()
    return f"in_{digest[:40]}"


# Beyond any real payment (ten trillion EUR, a billion USDC), and thousands of them still fit a
# balance's BIGINT.
MAX_INCOMING_MINOR = 10**15

# The provider's ids, as the columns that keep them hold them.
ProviderId = Annotated[SafeText, Field(max_length=64)]
# Free text about the payment, kept in the transaction's metadata as the provider sent it.
PaymentText = Annotated[str, Field(max_length=140)]


class PaymentReceived(BaseModel):
    """The `data` of `payment.received`, with its JSON types (strict: 10.5 or "1000" minor
    units are refused, never truncated); fields the provider adds are ignored."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    paymentId: ProviderId
    accountId: ProviderId
    budgetId: ProviderId
    budgetName: Annotated[SafeText, Field(max_length=100)] | None = None
    budgetIsDefault: bool = False
    currency: Annotated[BudgetCurrency, Field(strict=False)]
    amountMinor: Annotated[int, Field(gt=0, le=MAX_INCOMING_MINOR)]
    scheme: Annotated[str, Field(max_length=16)] | None = None
    senderName: PaymentText | None = None
    reference: PaymentText | None = None


class IncomingPaymentConflict(Conflict):
    code = "INCOMING_PAYMENT_CONFLICT"
    message = (
        "This paymentId was already received with another amount or currency; the first "
        "delivery stands."
    )


@inbound.handler(ExternalProvider.BANKPROV.value, PAYMENT_RECEIVED)
async def on_payment_received(session: AsyncSession, company_id: int, data: dict[str, Any]) -> None:
    """Credit the budget once per `paymentId`: a payment already recorded is acknowledged
    without effect, or refused when it reports another amount or currency."""
    payment = PaymentReceived.model_validate(data)
    account = await provisioning.by_provider_account(
        session, company_id=company_id, provider=BankProvider.BANKPROV, account_id=payment.accountId
    )
    if account is None:
        log.warning("incoming_payment_for_unknown_account")
        return
    currency = payment.currency.value
    amount = payment.amountMinor
    key = payment_key(payment.paymentId)
    if await _already_received(session, company_id, key, payment):
        return
    budget = await budgets.adopt(
        session,
        company_id=company_id,
        user_id=account.user_id,
        account_id=payment.accountId,
        provider_budget_id=payment.budgetId,
        name=payment.budgetName,
        is_default=payment.budgetIsDefault,
        currencies=[currency],
    )
    accounts = await budgets.with_settlement(
        session, company_id=company_id, budget_id=budget.id, currency=currency
    )
    target, settlement = accounts
    metadata = {
        "scheme": payment.scheme,
        "senderName": payment.senderName,
        "reference": payment.reference,
    }
    try:
        # A savepoint: a lost race undoes only this insert, not the callback's own record.
        async with session.begin_nested():
            transaction = await transactions.record(
                session,
                company_id=company_id,
                user_id=account.user_id,
                type_=TransactionType.INCOMING_PAYMENT,
                status=TransactionStatus.COMPLETED,
                provider=PROVIDER,
                amount_minor=amount,
                currency=currency,
                budget_id=budget.id,
                provider_reference=payment.paymentId,
                provider_key=key,
                metadata=metadata,
            )
    except IntegrityError:
        # A parallel delivery of the same payment recorded it first: this insert waited for
        # that one's commit on the unique key, so the money is already credited.
        if await _already_received(session, company_id, key, payment):
            return
        raise
    # Posted only once the key is ours, so a repeat never reaches the ledger.
    posted = await ledger.post_transfer(
        session,
        company_id=company_id,
        legs=[Leg(settlement.id, -amount), Leg(target.id, amount)],
        code="banking.incoming",
        reference=payment.paymentId,
        accounts=accounts,
    )
    await transactions.save_metadata(session, transaction, {"ledgerTransferId": posted.transfer_id})
    await events.record(
        session,
        company_id=company_id,
        type_="payment.received",
        domain="payment",
        provider=PROVIDER,
        data={
            "transactionId": transaction.id,
            "userId": account.user_id,
            "budgetId": budget.id,
            "currency": currency,
            "amount": from_minor(amount, currency),
            "scheme": payment.scheme,
        },
    )


async def _already_received(
    session: AsyncSession, company_id: int, key: str, payment: PaymentReceived
) -> bool:
    """Whether the payment is recorded already; refused when the record disagrees with it."""
    found = await transactions.by_provider_key(
        session, company_id=company_id, provider=PROVIDER, key=key
    )
    if found is None:
        return False
    if not _same_payment(found, payment):
        # Our transaction id and the amounts only: no sender, reference or account details.
        log.warning(
            "incoming_payment_conflict",
            transaction_id=found.id,
            recorded_currency=found.currency,
            recorded_amount_minor=found.amount_minor,
            reported_currency=payment.currency.value,
            reported_amount_minor=payment.amountMinor,
        )
        raise IncomingPaymentConflict()
    log.info("incoming_payment_duplicate", transaction_id=found.id)
    return True


def _same_payment(recorded: Transaction, payment: PaymentReceived) -> bool:
    return (recorded.currency, recorded.amount_minor) == (
        payment.currency.value,
        payment.amountMinor,
    )
