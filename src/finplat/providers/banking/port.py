"""The banking provider's core-banking port: budgets, balances and account details.

A user's banking-provider account (opened by the onboarding capability) holds budgets; each
budget holds a balance in each of its currencies. The provider is the system of record for
those balances; the platform's ledger mirrors them and reconciliation compares the two.

Incoming money (SEPA or FPS credits to the account's IBAN) is reported with a
`payment.received` callback `{paymentId, accountId, budgetId, currency, amountMinor, scheme,
senderName, reference, receivedAt}`.

The other concerns of the same provider have their own sections below (payees, FX, payments,
transfers); `BankingProvider`, at the end, is all of them together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Protocol, runtime_checkable

PAYMENT_RECEIVED = "payment.received"
# What a budget can hold: the fiat currencies of the account and the two stablecoins.
BUDGET_CURRENCIES: tuple[str, ...] = ("EUR", "GBP", "USD", "USDC", "USDT")


@dataclass(frozen=True)
class ProviderBudget:
    budget_id: str
    account_id: str
    name: str
    is_default: bool
    balances: dict[str, int]  # currency -> minor units held at the provider
    created_at: datetime


@dataclass(frozen=True)
class BankingDetails:
    """How the outside world pays into the account."""

    account_id: str
    account_holder_name: str
    iban: str
    bic: str
    bank_name: str
    bank_address: str
    account_number: str
    sort_code: str


@dataclass(frozen=True)
class IncomingPayment:
    payment_id: str
    budget_id: str
    currency: str
    amount_minor: int
    scheme: str
    sender_name: str
    reference: str | None
    received_at: datetime


class BudgetsPort(Protocol):
    async def banking_details(
        self, *, company_id: int, account_id: str, holder_name: str
    ) -> BankingDetails:
        """The account's IBAN, BIC and UK details. Only an active account has them."""
        ...

    async def list_budgets(self, *, company_id: int, account_id: str) -> list[ProviderBudget]:
        """The account's budgets, oldest first; an active account always has its default
        budget."""
        ...

    async def create_budget(
        self,
        *,
        company_id: int,
        account_id: str,
        idempotency_key: str,
        name: str,
        currencies: Sequence[str],
    ) -> ProviderBudget:
        """Open another budget (a repeat with the same key returns the first)."""
        ...


@runtime_checkable
class SandboxBudgetSimulation(Protocol):
    """What only the sandbox provider offers: money arriving from outside."""

    async def simulate_incoming(
        self,
        *,
        company_id: int,
        budget_id: str,
        currency: str,
        amount_minor: int,
        scheme: str,
        sender_name: str,
        reference: str | None,
    ) -> IncomingPayment: ...


# ------------------------------------------------------------------------------------------------
# The banking provider's FX port: quotes and trades between the currencies of one budget.
#
# A quote fixes a rate and both amounts for a short time (the provider says until when); a
# trade executes one quote, at most once, moving the sell amount out of the budget and the buy
# amount in. Trades carry the caller's idempotency key: the same key always answers the same
# trade, so a call repeated after a lost answer never trades twice, and `trade_by_key` finds
# the trade a lost answer was about.


class FixedSide(StrEnum):
    """Which amount the customer fixed; the provider computes the other one."""

    SELL = "SELL"
    BUY = "BUY"


class TradeStatus(StrEnum):
    PENDING = "PENDING"  # accepted; the provider settles it later
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"


@dataclass(frozen=True)
class ProviderQuote:
    quote_id: str
    budget_id: str
    sell_currency: str
    buy_currency: str
    sell_amount_minor: int
    buy_amount_minor: int
    rate: Decimal  # buy-currency units for one sell-currency unit, spread included
    fixed_side: FixedSide
    expires_at: datetime


@dataclass(frozen=True)
class ProviderTrade:
    trade_id: str
    quote_id: str
    status: TradeStatus
    sell_currency: str
    buy_currency: str
    sell_amount_minor: int
    buy_amount_minor: int
    rate: Decimal
    executed_at: datetime | None  # set once COMPLETED
    failure_reason: str | None = None


class FxPort(Protocol):
    async def quote(
        self,
        *,
        company_id: int,
        budget_id: str,
        sell_currency: str,
        buy_currency: str,
        amount_minor: int,
        fixed_side: FixedSide,
    ) -> ProviderQuote:
        """Price a conversion inside one budget. `amount_minor` is in the fixed side's
        currency; the other amount is rounded in the provider's favour."""
        ...

    async def execute_trade(
        self, *, company_id: int, quote_id: str, idempotency_key: str
    ) -> ProviderTrade:
        """Execute a quote once. The same key returns the first trade; another key for an
        executed quote, an expired quote or a budget that cannot pay are refused."""
        ...

    async def trade_by_key(self, *, company_id: int, idempotency_key: str) -> ProviderTrade | None:
        """The trade made with this key, with its current status (None: never received)."""
        ...


# ------------------------------------------------------------------------------------------------
# The banking provider's payees port (`BankingProvider` is the whole provider).
#
# A payee is registered at the provider once the platform has verified it; payments name the
# provider's payee id. The provider keeps the full account details; the platform keeps only the
# last four characters.


class ProviderPayeeStatus(StrEnum):
    ACTIVE = "ACTIVE"
    REMOVED = "REMOVED"


@dataclass(frozen=True)
class PayeeDetails:
    """Who to pay and where: the full account details, sent only to the provider."""

    name: str
    payment_type: str  # COMPANY | INDIVIDUAL
    payment_method: str  # SEPA.CREDITTRANSFER | SEPA.INSTANT | FPS | SWIFT
    currency: str
    iban: str | None = None
    account_number: str | None = None
    sort_code: str | None = None
    bic: str | None = None
    bank_name: str | None = None
    bank_country: str | None = None

    def __repr__(self) -> str:  # never print full account details (logs, tracebacks)
        return (
            f"PayeeDetails(payment_method={self.payment_method!r}, currency={self.currency!r}, ...)"
        )


@dataclass(frozen=True)
class ProviderPayee:
    payee_id: str  # bp_pye_...
    account_id: str
    name: str
    payment_method: str
    currency: str
    account_number_last4: str
    status: ProviderPayeeStatus
    created_at: datetime


class PayeesPort(Protocol):
    async def register_payee(
        self,
        *,
        company_id: int,
        account_id: str,
        idempotency_key: str,
        details: PayeeDetails,
    ) -> ProviderPayee:
        """Register a payee for the account (a repeat with the same key returns the first
        registration; the key of another account or company is refused)."""
        ...

    async def payee_by_key(self, *, company_id: int, idempotency_key: str) -> ProviderPayee | None:
        """The payee registered with this key, if the provider received it (finds a
        registration whose answer was lost)."""
        ...

    async def remove_payee(self, *, company_id: int, payee_id: str) -> ProviderPayee:
        """Remove a payee: no payment can name it any more. Removing it again is not an
        error; an unknown payee is 404."""
        ...


# ------------------------------------------------------------------------------------------------
# The banking provider's payments port: payouts to payees, grouped by the provider into
# payment batches (a batch whose payments need a currency conversion carries an FX order).
#
# Statuses are the provider's; asynchronous changes arrive as callbacks:
# * `payment.status_changed` `{paymentId, batchId, status, reason, idempotencyKey}` (the key the
# payment was created under, so a payment whose creation answer was lost is still found);
# * `payment_batch.status_changed` `{batchId, status, paymentIds}` (batch statuses: PENDING,
# PROCESSING, COMPLETED, CANCELLED);
# * `payment_batch_order.cancelled` `{batchId, orderId, paymentIds, reason}` (the batch's FX
# order was cancelled; its payments failed).


PAYMENT_STATUS_CHANGED = "payment.status_changed"
BATCH_STATUS_CHANGED = "payment_batch.status_changed"
BATCH_ORDER_CANCELLED = "payment_batch_order.cancelled"


class PaymentStatus(StrEnum):
    PENDING = "PENDING"  # accepted, waiting in its batch
    PROCESSING = "PROCESSING"  # the batch is being executed
    COMPLETED = "COMPLETED"  # the money left; the provider debited the budget for good
    FAILED = "FAILED"  # refused, returned or cancelled; the provider refunded the budget


@dataclass(frozen=True)
class PaymentPrice:
    """What a payout costs: the payee receives `amount_minor` of `currency`; the budget
    gives `debit_amount_minor` + `fee_minor` of `debit_currency`."""

    amount_minor: int
    currency: str
    debit_amount_minor: int
    debit_currency: str
    fee_minor: int
    rate: Decimal  # units of `currency` per unit of `debit_currency` (1 when the same)


@dataclass(frozen=True)
class ProviderPayment:
    payment_id: str  # a positive integer, as a string
    batch_id: str
    status: PaymentStatus
    amount_minor: int
    currency: str
    debit_amount_minor: int
    debit_currency: str
    fee_minor: int
    reason: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class PaymentConfirmation:
    """The provider's proof that a payment was executed."""

    payment_id: str
    status: PaymentStatus
    amount_minor: int
    currency: str
    beneficiary_name: str
    beneficiary_account_last4: str
    payment_method: str
    confirmation_reference: str  # the scheme's end-to-end reference
    executed_at: datetime


class PaymentsPort(Protocol):
    async def price_payment(
        self,
        *,
        company_id: int,
        budget_id: str,
        payment_method: str,
        amount_minor: int,
        currency: str,
        debit_currency: str,
    ) -> PaymentPrice:
        """Price a payout (fee for the method, conversion when the currencies differ)."""
        ...

    async def create_payment(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        budget_id: str,
        payee_id: str,
        amount_minor: int,
        currency: str,
        debit_currency: str,
        reference: str | None,
    ) -> ProviderPayment:
        """Accept a payout (a repeat with the same key returns the first payment). The
        provider debits the budget at once and refunds it if the payment fails."""
        ...

    async def payment(self, *, company_id: int, payment_id: str) -> ProviderPayment:
        """The payment's current state (404 if the provider has none)."""
        ...

    async def payment_by_key(
        self, *, company_id: int, idempotency_key: str
    ) -> ProviderPayment | None:
        """The payment created with this key, if the provider received it (finds a payment
        whose creation answer was lost)."""
        ...

    async def payment_confirmation(
        self, *, company_id: int, payment_id: str
    ) -> PaymentConfirmation:
        """Proof of execution; refused (400) unless the payment completed, 404 if unknown."""
        ...


# ------------------------------------------------------------------------------------------------
# The banking provider's transfers port: moving money between two budgets of one account, or
# from a budget to the company's master account at the provider (`BankingProvider` is the
# whole provider).
#
# Transfers are keyed by the caller's idempotency key: a repeat with the same key returns the
# first transfer and moves nothing again, and `transfer_by_key` finds a transfer whose answer
# was lost.


class ProviderTransferStatus(StrEnum):
    PENDING = "PENDING"  # accepted; the source is debited, the destination not yet credited
    COMPLETED = "COMPLETED"  # both sides moved
    FAILED = "FAILED"  # refused after acceptance; the provider returned the money to the source


@dataclass(frozen=True)
class ProviderTransfer:
    transfer_id: str  # "bp_trf_..."
    status: ProviderTransferStatus
    from_budget_id: str
    to_budget_id: str | None  # None: the company's master account at the provider
    currency: str
    amount_minor: int
    reason: str | None
    created_at: datetime
    completed_at: datetime | None


class TransfersPort(Protocol):
    async def transfer(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        from_budget_id: str,
        to_budget_id: str | None,
        currency: str,
        amount_minor: int,
    ) -> ProviderTransfer:
        """Move `amount_minor` of `currency` from one budget to another budget of the same
        account, or (`to_budget_id` None) to the company's master account. Refuses a budget
        that does not hold the currency or a balance that does not cover the amount. A repeat
        with the same key returns the first transfer (refused if its terms differ)."""
        ...

    async def transfer_by_key(
        self, *, company_id: int, idempotency_key: str
    ) -> ProviderTransfer | None:
        """The transfer made with this key, or None if the provider never received it."""
        ...


# ------------------------------------------------------------------------------------------------
# The banking provider's payment-requests port: a user asks to be paid into one of their
# budgets. The provider issues a request a payer can pay (fully, or not at all) until it
# expires; the money lands in the budget and the provider reports it with the callback
# `payment_request.paid` `{requestId, paymentId, budgetId, currency, amountMinor, payerName,
# paidAt}`. The provider is the authority on whether a request was paid: it refuses a payment
# after the request's expiry or cancellation, and refuses to cancel a paid request.

PAYMENT_REQUEST_PAID = "payment_request.paid"
# The provider's refusal code for cancelling a request a payer already paid.
REQUEST_ALREADY_PAID = "PROVIDER_REQUEST_PAID"


class ProviderRequestStatus(StrEnum):
    PENDING = "PENDING"  # payable
    PAID = "PAID"  # the payer paid it in full; the budget was credited
    CANCELLED = "CANCELLED"
    EXPIRED = "EXPIRED"  # its expiry passed unpaid


@dataclass(frozen=True)
class ProviderPaymentRequest:
    request_id: str  # "bp_prq_..."
    budget_id: str
    currency: str
    amount_minor: int
    status: ProviderRequestStatus
    expires_at: datetime
    payment_id: str | None  # the incoming payment that paid it
    paid_at: datetime | None


class PaymentRequestsPort(Protocol):
    async def create_payment_request(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        budget_id: str,
        currency: str,
        amount_minor: int,
        expires_at: datetime,
        description: str | None,
    ) -> ProviderPaymentRequest:
        """Issue a payable request into the budget (a repeat with the same key returns the
        first). Refuses a currency the budget does not hold."""
        ...

    async def cancel_payment_request(
        self, *, company_id: int, request_id: str
    ) -> ProviderPaymentRequest:
        """Stop the request from being paid. Cancelling a cancelled or expired request
        answers it as it is; a paid request is refused (409 `PROVIDER_REQUEST_PAID`)."""
        ...

    async def payment_request(self, *, company_id: int, request_id: str) -> ProviderPaymentRequest:
        """The request's current state (404 if the provider has none)."""
        ...


@runtime_checkable
class SandboxPaymentRequestSimulation(Protocol):
    """What only the sandbox provider offers: a payer paying a request."""

    async def simulate_request_payment(
        self, *, company_id: int, request_id: str, amount_minor: int, payer_name: str
    ) -> ProviderPaymentRequest:
        """The payer pays `amount_minor`: exactly the requested amount, while the request is
        pending and unexpired, or nothing happens (refused)."""
        ...


# ------------------------------------------------------------------------------------------------
# The banking provider's mandates port: a user authorises the company to collect from one of
# their budgets, up to a maximum per period. The provider authorises the mandate
# asynchronously (callback `mandate.status_changed` `{mandateId, status, reason}`, statuses
# PENDING, ACTIVE, FAILED, CANCELLED) and executes collections against an active mandate,
# moving the money from the budget to the company's master account. A collection the provider
# cannot settle at once stays PENDING and is reported with `collection.status_changed`
# `{collectionId, status, reason, idempotencyKey}`; `collection_by_key` finds a collection whose
# answer was lost.

MANDATE_STATUS_CHANGED = "mandate.status_changed"
COLLECTION_STATUS_CHANGED = "collection.status_changed"


class ProviderMandateStatus(StrEnum):
    PENDING = "PENDING"  # waiting for the account holder's authorisation
    ACTIVE = "ACTIVE"
    FAILED = "FAILED"  # authorisation refused
    CANCELLED = "CANCELLED"


class ProviderCollectionStatus(StrEnum):
    PENDING = "PENDING"  # accepted; the budget is not debited yet
    COMPLETED = "COMPLETED"  # the money moved to the company's master account
    FAILED = "FAILED"  # nothing moved; `reason` says why


class CollectionFailure(StrEnum):
    """Why the provider failed a collection (typed reasons the platform passes on)."""

    INSUFFICIENT_FUNDS = "INSUFFICIENT_FUNDS"
    MANDATE_CANCELLED = "MANDATE_CANCELLED"
    MANDATE_EXPIRED = "MANDATE_EXPIRED"
    MANDATE_NOT_ACTIVE = "MANDATE_NOT_ACTIVE"
    REFUSED_BY_PAYER_BANK = "REFUSED_BY_PAYER_BANK"


@dataclass(frozen=True)
class ProviderMandate:
    mandate_id: str  # "bp_mdt_..."
    status: ProviderMandateStatus
    reason: str | None


@dataclass(frozen=True)
class ProviderCollection:
    collection_id: str  # "bp_col_..."
    mandate_id: str
    status: ProviderCollectionStatus
    amount_minor: int
    currency: str
    reason: CollectionFailure | None


class MandatesPort(Protocol):
    async def create_mandate(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        budget_id: str,
        currency: str,
        max_amount_minor: int,
        end_date: date | None,
    ) -> ProviderMandate:
        """Ask the account holder to authorise collections from the budget (answered
        `PENDING`; the decision arrives as `mandate.status_changed`). A repeat with the same key
        returns the first."""
        ...

    async def cancel_mandate(self, *, company_id: int, mandate_id: str) -> ProviderMandate:
        """No collection is accepted afterwards. Cancelling again answers it as it is."""
        ...

    async def mandate(self, *, company_id: int, mandate_id: str) -> ProviderMandate:
        """The mandate's current state (404 if the provider has none)."""
        ...

    async def collect(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        mandate_id: str,
        currency: str,
        amount_minor: int,
    ) -> ProviderCollection:
        """Collect from the mandate's budget into the company's master account. A mandate that
        is not active, or a budget that cannot pay, gives a `FAILED` collection with its reason
        (not an error). A repeat with the same key returns the first."""
        ...

    async def collection_by_key(
        self, *, company_id: int, idempotency_key: str
    ) -> ProviderCollection | None:
        """The collection made with this key, or None if the provider never received it."""
        ...


@runtime_checkable
class SandboxMandateSimulation(Protocol):
    """What only the sandbox provider offers: the account holder deciding a mandate, and a
    pending collection settling."""

    async def decide_mandate(
        self, *, company_id: int, mandate_id: str, approve: bool
    ) -> ProviderMandate: ...

    async def settle_collection(
        self,
        *,
        company_id: int,
        collection_id: str,
        status: ProviderCollectionStatus,
        reason: CollectionFailure | None,
    ) -> ProviderCollection: ...


# ------------------------------------------------------------------------------------------------


class BankingProvider(
    BudgetsPort,
    PayeesPort,
    FxPort,
    PaymentsPort,
    TransfersPort,
    PaymentRequestsPort,
    MandatesPort,
    Protocol,
):
    """Everything the platform asks of the banking provider once an account is open."""
