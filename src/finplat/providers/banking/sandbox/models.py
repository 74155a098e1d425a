"""The sandbox banking provider's own state, as an outside system would keep it: budgets,
balances and the movements that changed them, then (in sections below) its FX quotes and
trades, payees, payments and transfers."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import BigInteger, Boolean, CheckConstraint, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId
from finplat.kit.clock import utcnow


class SandboxBankprovBudget(Base):
    __tablename__ = "sandbox_bankprov_budgets"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    account_id: Mapped[str] = mapped_column(String(64), index=True)
    budget_id: Mapped[str] = mapped_column(String(64), unique=True)
    # Set for budgets opened on request; the default budget is keyed by its account.
    idempotency_key: Mapped[str] = mapped_column(String(128), unique=True)
    name: Mapped[str] = mapped_column(String(100))
    is_default: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SandboxBankprovBalance(Base):
    """What the provider holds for a budget in one currency. Never negative."""

    __tablename__ = "sandbox_bankprov_balances"
    __table_args__ = (
        UniqueConstraint("budget_id", "currency"),
        CheckConstraint("amount_minor >= 0", name="not_negative"),
    )

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    budget_id: Mapped[str] = mapped_column(String(64))
    currency: Mapped[str] = mapped_column(String(8))
    amount_minor: Mapped[int] = mapped_column(BigInteger, default=0)


class SandboxBankprovMovement(Base):
    """One change of a provider balance (its statement line)."""

    __tablename__ = "sandbox_bankprov_movements"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    budget_id: Mapped[str] = mapped_column(String(64), index=True)
    currency: Mapped[str] = mapped_column(String(8))
    amount_minor: Mapped[int] = mapped_column(BigInteger)  # signed: negative leaves the budget
    kind: Mapped[str] = mapped_column(String(32))
    reference: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


# ------------------------------------------------------------------------------------------------
# The sandbox banking provider's FX state: the quotes it gave and the trades it executed.


class SandboxBankprovFxQuote(Base):
    __tablename__ = "sandbox_bankprov_fx_quotes"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    quote_id: Mapped[str] = mapped_column(String(64), unique=True)
    budget_id: Mapped[str] = mapped_column(String(64))
    sell_currency: Mapped[str] = mapped_column(String(8))
    buy_currency: Mapped[str] = mapped_column(String(8))
    sell_amount_minor: Mapped[int] = mapped_column(BigInteger)
    buy_amount_minor: Mapped[int] = mapped_column(BigInteger)
    rate: Mapped[str] = mapped_column(String(32))  # exact decimal digits
    fixed_side: Mapped[str] = mapped_column(String(8))
    expires_at: Mapped[datetime] = mapped_column()
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SandboxBankprovFxTrade(Base):
    """One execution of a quote: a quote is executed at most once (unique `quote_id`), and
    a key names at most one trade (unique `idempotency_key`)."""

    __tablename__ = "sandbox_bankprov_fx_trades"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    trade_id: Mapped[str] = mapped_column(String(64), unique=True)
    quote_id: Mapped[str] = mapped_column(String(64), unique=True)
    idempotency_key: Mapped[str] = mapped_column(String(128), unique=True)
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    executed_at: Mapped[datetime | None] = mapped_column(default=None)


# ------------------------------------------------------------------------------------------------
# The sandbox banking provider's payees (as an outside system would keep them, with the full
# account details).


class SandboxBankprovPayee(Base):
    __tablename__ = "sandbox_bankprov_payees"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    account_id: Mapped[str] = mapped_column(String(64), index=True)
    payee_id: Mapped[str] = mapped_column(String(64), unique=True)
    idempotency_key: Mapped[str] = mapped_column(String(128), unique=True)
    name: Mapped[str] = mapped_column(String(100))
    payment_type: Mapped[str] = mapped_column(String(16))
    payment_method: Mapped[str] = mapped_column(String(32))
    currency: Mapped[str] = mapped_column(String(8))
    iban: Mapped[str | None] = mapped_column(String(34), default=None)
    account_number: Mapped[str | None] = mapped_column(String(34), default=None)
    sort_code: Mapped[str | None] = mapped_column(String(6), default=None)
    account_number_last4: Mapped[str] = mapped_column(String(4))
    bic: Mapped[str | None] = mapped_column(String(11), default=None)
    bank_name: Mapped[str | None] = mapped_column(String(100), default=None)
    bank_country: Mapped[str | None] = mapped_column(String(2), default=None)
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    removed_at: Mapped[datetime | None] = mapped_column(default=None)


# ------------------------------------------------------------------------------------------------
# The sandbox banking provider's payments state: payment batches (with their FX order when
# the payments need a conversion) and the payments in them, as an outside system keeps them.


# Payment ids are positive integers (the provider's numeric ids): the row id plus this offset.
PAYMENT_ID_OFFSET = 100000


class SandboxBankprovPaymentBatch(Base):
    """A batch of payments the provider executes together (one payment per batch here)."""

    __tablename__ = "sandbox_bankprov_payment_batches"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger, index=True)
    batch_id: Mapped[str] = mapped_column(String(64), unique=True)
    budget_id: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))  # PENDING, PROCESSING, COMPLETED, CANCELLED
    # The FX order converting the debit currency when the payments need it.
    order_id: Mapped[str | None] = mapped_column(String(64), default=None)
    # OPEN until the batch executes (FILLED) or the order is cancelled (CANCELLED).
    order_status: Mapped[str | None] = mapped_column(String(16), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class SandboxBankprovPayment(Base):
    """One payout to a payee. The budget was debited `debit_amount_minor + fee_minor` of
    `debit_currency` when the payment was accepted, and is refunded if it fails."""

    __tablename__ = "sandbox_bankprov_payments"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger, index=True)
    idempotency_key: Mapped[str] = mapped_column(String(128), unique=True)
    batch_id: Mapped[str] = mapped_column(String(64), index=True)
    budget_id: Mapped[str] = mapped_column(String(64))
    payee_id: Mapped[str] = mapped_column(String(64))
    payment_method: Mapped[str] = mapped_column(String(32))
    beneficiary_name: Mapped[str] = mapped_column(String(200))
    beneficiary_account_last4: Mapped[str] = mapped_column(String(4))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(8))
    debit_amount_minor: Mapped[int] = mapped_column(BigInteger)
    debit_currency: Mapped[str] = mapped_column(String(8))
    fee_minor: Mapped[int] = mapped_column(BigInteger)
    rate: Mapped[str] = mapped_column(String(32))
    reference: Mapped[str | None] = mapped_column(String(140), default=None)
    status: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(String(200), default=None)
    confirmation_reference: Mapped[str | None] = mapped_column(String(64), default=None)
    executed_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)

    @property
    def payment_id(self) -> str:
        return str(self.id + PAYMENT_ID_OFFSET)


# ------------------------------------------------------------------------------------------------
# The sandbox banking provider's transfers (budget to budget, budget to company master), as an
# outside system would keep them: one row per idempotency key.


class SandboxBankprovTransfer(Base):
    __tablename__ = "sandbox_bankprov_transfers"
    __table_args__ = (UniqueConstraint("company_id", "idempotency_key"),)

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    transfer_id: Mapped[str] = mapped_column(String(64), unique=True)
    idempotency_key: Mapped[str] = mapped_column(String(128))
    from_budget_id: Mapped[str] = mapped_column(String(64))
    # The provider budget credited; for a transfer to the company master, its balance row.
    to_budget_id: Mapped[str] = mapped_column(String(64))
    to_master: Mapped[bool] = mapped_column(default=False)
    currency: Mapped[str] = mapped_column(String(8))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(String(200), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    completed_at: Mapped[datetime | None] = mapped_column(default=None)


class SandboxBankprovPaymentRequest(Base):
    """A request a payer can pay into a budget, in full, until `expires_at`."""

    __tablename__ = "sandbox_bankprov_payment_requests"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger, index=True)
    request_id: Mapped[str] = mapped_column(String(64), unique=True)
    idempotency_key: Mapped[str] = mapped_column(String(128), unique=True)
    budget_id: Mapped[str] = mapped_column(String(64))
    currency: Mapped[str] = mapped_column(String(8))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    description: Mapped[str | None] = mapped_column(String(140), default=None)
    status: Mapped[str] = mapped_column(String(16))
    expires_at: Mapped[datetime]
    payment_id: Mapped[str | None] = mapped_column(String(64), default=None)
    paid_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SandboxBankprovMandate(Base):
    """A direct-debit mandate on a budget, as the account holder's bank keeps it."""

    __tablename__ = "sandbox_bankprov_mandates"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger, index=True)
    mandate_id: Mapped[str] = mapped_column(String(64), unique=True)
    idempotency_key: Mapped[str] = mapped_column(String(128), unique=True)
    budget_id: Mapped[str] = mapped_column(String(64))
    currency: Mapped[str] = mapped_column(String(8))
    max_amount_minor: Mapped[int] = mapped_column(BigInteger)
    end_date: Mapped[date | None] = mapped_column(default=None)
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SandboxBankprovCollection(Base):
    """One collection against a mandate; `PENDING` ones have not moved money yet."""

    __tablename__ = "sandbox_bankprov_collections"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger, index=True)
    collection_id: Mapped[str] = mapped_column(String(64), unique=True)
    idempotency_key: Mapped[str] = mapped_column(String(128), unique=True)
    mandate_id: Mapped[str] = mapped_column(String(64))
    currency: Mapped[str] = mapped_column(String(8))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(String(32), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
