from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from finplat.kit.money import DecimalAmount, from_minor
from finplat.kit.pagination import Page
from finplat.kit.schemas import ResponseModel
from finplat.providers.banking.port import PaymentStatus
from finplat.providers.names import BankProvider
from finplat.transactions.kinds import TransactionStatus, TransactionType
from finplat.transactions.models import Transaction
from finplat.transactions.service import ConfirmedPayment, metadata_of


class TransactionResponse(ResponseModel):
    Id: int
    UserId: int
    Type: TransactionType
    Status: TransactionStatus = Field(
        description="`PENDING` until the provider has decided; a lost or pending provider "
        "answer is never reported as `COMPLETED`."
    )
    StatusReason: str | None
    Provider: BankProvider
    Amount: DecimalAmount
    Currency: str
    FeeAmount: DecimalAmount | None
    FeeCurrency: str | None
    BudgetId: str | None
    ProviderReference: str | None
    RelatedCardTransactionId: int | None
    Metadata: dict[str, Any]
    CreatedAt: datetime
    UpdatedAt: datetime
    CompletedAt: datetime | None

    @classmethod
    def of(cls, tx: Transaction) -> TransactionResponse:
        return cls(
            Id=tx.id,
            UserId=tx.user_id,
            Type=TransactionType(tx.type),
            Status=TransactionStatus(tx.status),
            StatusReason=tx.status_reason,
            Provider=BankProvider(tx.provider),
            Amount=from_minor(tx.amount_minor, tx.currency),
            Currency=tx.currency,
            FeeAmount=(
                from_minor(tx.fee_minor, tx.fee_currency or tx.currency)
                if tx.fee_minor is not None
                else None
            ),
            FeeCurrency=tx.fee_currency,
            BudgetId=tx.budget_id,
            ProviderReference=tx.provider_reference,
            RelatedCardTransactionId=tx.related_card_transaction_id,
            Metadata=metadata_of(tx),
            CreatedAt=tx.created_at,
            UpdatedAt=tx.updated_at,
            CompletedAt=tx.completed_at,
        )


class TransactionPage(Page[TransactionResponse]):
    """Transactions, newest first."""


class PaymentConfirmationResponse(ResponseModel):
    """The banking provider's proof that a payout was executed."""

    TransactionId: int
    PaymentId: str = Field(description="The banking provider's id of the payment.")
    Status: PaymentStatus = Field(description="The provider's status of the payment.")
    Amount: DecimalAmount = Field(description="What the payee received.")
    Currency: str
    BeneficiaryName: str
    BeneficiaryAccountLast4: str = Field(
        description="The last four characters of the payee's account number or IBAN."
    )
    PaymentMethod: str
    ConfirmationReference: str = Field(description="The payment scheme's end-to-end reference.")
    ExecutedAt: datetime
    Provider: BankProvider

    @classmethod
    def of(cls, confirmed: ConfirmedPayment) -> PaymentConfirmationResponse:
        found = confirmed.confirmation
        return cls(
            TransactionId=confirmed.transaction.id,
            PaymentId=found.payment_id,
            Status=found.status,
            Amount=from_minor(found.amount_minor, found.currency),
            Currency=found.currency,
            BeneficiaryName=found.beneficiary_name,
            BeneficiaryAccountLast4=found.beneficiary_account_last4,
            PaymentMethod=found.payment_method,
            ConfirmationReference=found.confirmation_reference,
            ExecutedAt=found.executed_at,
            Provider=BankProvider(confirmed.transaction.provider),
        )
