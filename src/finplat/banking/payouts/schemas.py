from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any

from fastapi import Path
from pydantic import ConfigDict, Field, JsonValue

from finplat.banking.identifiers import PAYEE_ID_PATTERN
from finplat.banking.payouts import approvals as approval_rules
from finplat.banking.payouts.models import ApprovalStatus, PayoutApproval
from finplat.banking.schemas import AccountIdField, BudgetIdField
from finplat.kit.fields import SafeText
from finplat.kit.money import AmountRange, DecimalAmount, exponent, from_minor, schema_number
from finplat.kit.schemas import MAX_ID, PARAMETER_ID, RequestModel, ResponseModel
from finplat.providers.names import BankProvider
from finplat.transactions.kinds import TransactionStatus
from finplat.transactions.models import Transaction
from finplat.transactions.service import metadata_of

# What a payee can be paid in, and what a budget can fund a payout with: the fiat currencies
# of a budget.
PAYOUT_CURRENCIES: tuple[str, ...] = ("EUR", "GBP", "USD")
PayoutCurrency = StrEnum(  # type: ignore[misc]
    "PayoutCurrency", {code: code for code in PAYOUT_CURRENCIES}
)
MAX_PAYOUT = Decimal("1000000")

PayeeIdField = Annotated[
    str,
    Field(pattern=PAYEE_ID_PATTERN, description="The `PayeeId` of one of the user's payees."),
]
ApprovalIdField = Annotated[
    str,
    Field(
        pattern=approval_rules.APPROVAL_ID_PATTERN,
        description="The `ApprovalId` the initiate call returned.",
    ),
]
ApprovalIdPath = Annotated[
    str,
    Path(
        pattern=approval_rules.APPROVAL_ID_PATTERN,
        description="The `ApprovalId` the initiate call returned.",
    ),
]
PayoutIdPath = Annotated[
    int, Path(ge=1, le=MAX_ID, description="The `PayoutId` the create call returned."), PARAMETER_ID
]


def _amount_precision() -> list[JsonValue]:
    """`Amount` has at most the decimals of `Currency` (anyOf branches by exponent)."""
    by_exponent: dict[int, list[JsonValue]] = {}
    for code in PAYOUT_CURRENCIES:
        by_exponent.setdefault(exponent(code), []).append(code)
    return [
        {
            "properties": {
                "Currency": {"enum": codes},
                "Amount": {"multipleOf": schema_number(Decimal(1).scaleb(-places))},
            }
        }
        for places, codes in sorted(by_exponent.items())
    ]


TERMS_EXAMPLE: dict[str, Any] = {
    "AccountId": "bp_acc_5f2c0e4d9a1b4c7e8f0a1b2c",
    "BudgetId": "bud_0123456789abcdef01234567",
    "PayeeId": "pye_0123456789abcdef01234567",
    "Amount": 125.5,
    "Currency": "EUR",
    "Reference": "Invoice 2024-117",
}


class PayoutTerms(RequestModel):
    """What to pay, to whom, from where. Check, initiate and create take the same terms."""

    model_config = ConfigDict(
        json_schema_extra={"example": TERMS_EXAMPLE, "anyOf": _amount_precision()}
    )

    AccountId: AccountIdField
    BudgetId: BudgetIdField
    PayeeId: PayeeIdField
    Amount: Annotated[DecimalAmount, AmountRange(greater_than=Decimal(0), at_most=MAX_PAYOUT)] = (
        Field(description="What the payee receives, in `Currency` (its decimals at most).")
    )
    Currency: Annotated[PayoutCurrency, Field(strict=False)] = Field(
        description="The payee's currency. A closed list (EUR, GBP, USD): the fiat currencies "
        "of a budget, the only ones a payout can be funded and paid in."
    )
    FromCurrency: Annotated[PayoutCurrency, Field(strict=False)] | None = Field(
        default=None,
        description="The budget currency that funds the payout, when the budget holds several "
        "(converted at the provider's rate). Default: `Currency`.",
    )
    Reference: Annotated[SafeText, Field(max_length=140)] | None = Field(
        default=None, description="Shown to the payee with the payment."
    )


class PayoutCreate(PayoutTerms):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {**TERMS_EXAMPLE, "ApprovalId": "pap_0123456789abcdef01234567"},
            "anyOf": _amount_precision(),
        }
    )

    ApprovalId: ApprovalIdField


class ApprovalVerification(RequestModel):
    VerificationToken: Annotated[
        str,
        Field(
            pattern=approval_rules.TOKEN_PATTERN,
            description="The one-time token of the approval, as the user confirmed it.",
        ),
    ]


class PriceFields(ResponseModel):
    Amount: DecimalAmount = Field(description="What the payee receives.")
    Currency: str
    DebitAmount: DecimalAmount = Field(description="What leaves the budget for the payee.")
    DebitCurrency: str
    Fee: DecimalAmount = Field(description="The provider's fee, also taken from the budget.")
    FeeCurrency: str
    ExchangeRate: DecimalAmount = Field(
        description="Units of `Currency` per unit of `DebitCurrency` (1 without conversion)."
    )


class PayoutCheckResponse(PriceFields):
    Ok: bool = Field(description="True when the payout can be initiated as it is.")
    Problems: list[str] = Field(description="What stands in the way, e.g. `INSUFFICIENT_FUNDS`.")


class ApprovalResponse(PriceFields):
    ApprovalId: str
    Status: ApprovalStatus
    UserId: int
    AccountId: str
    BudgetId: str
    PayeeId: str
    FromCurrency: str
    Reference: str | None
    ExpiresAt: datetime = Field(description="Verify and create the payout before this time.")
    VerifiedAt: datetime | None
    PayoutId: int | None = Field(description="The payout created with this approval.")
    CreatedAt: datetime

    @classmethod
    def fields_of(cls, approval: PayoutApproval) -> dict[str, Any]:
        debit = approval.debit_currency
        return {
            "ApprovalId": approval.id,
            "Status": approval_rules.effective_status(approval),
            "UserId": approval.user_id,
            "AccountId": approval.account_id,
            "BudgetId": approval.budget_id,
            "PayeeId": approval.payee_id,
            "Amount": from_minor(approval.amount_minor, approval.currency),
            "Currency": approval.currency,
            "FromCurrency": debit,
            "DebitAmount": from_minor(approval.debit_amount_minor, debit),
            "DebitCurrency": debit,
            "Fee": from_minor(approval.fee_minor, debit),
            "FeeCurrency": debit,
            "ExchangeRate": Decimal(approval.rate),
            "Reference": approval.reference,
            "ExpiresAt": approval.expires_at,
            "VerifiedAt": approval.verified_at,
            "PayoutId": approval.transaction_id,
            "CreatedAt": approval.created_at,
        }

    @classmethod
    def of(cls, approval: PayoutApproval) -> ApprovalResponse:
        return cls(**cls.fields_of(approval))


class ApprovalChallenge(ApprovalResponse):
    VerificationToken: str = Field(
        description="One-time token for the user to confirm the payout (show it to the user; "
        "it is never returned again)."
    )

    @classmethod
    def issued(cls, approval: PayoutApproval, token: str) -> ApprovalChallenge:
        return cls(**cls.fields_of(approval), VerificationToken=token)


def _amount(meta: dict[str, Any], key: str) -> Decimal:
    return Decimal(str(meta[key]))


class PayoutResponse(PriceFields):
    PayoutId: int
    TransactionId: int
    UserId: int
    Status: TransactionStatus = Field(
        description="`PENDING` until the provider has executed or refused the payment; a "
        "pending or uncertain provider outcome is never reported as `COMPLETED`."
    )
    StatusReason: str | None = Field(
        description="Why it failed, or `PROVIDER_OUTCOME_UNCERTAIN` while the provider's answer "
        "to the creation is unknown (reconciliation decides)."
    )
    Provider: BankProvider
    PaymentBatchId: str | None = Field(description="The provider's payment batch, once known.")
    PayeeId: str
    BudgetId: str
    AccountId: str
    ApprovalId: str
    Reference: str | None
    CreatedAt: datetime
    CompletedAt: datetime | None

    @classmethod
    def of(cls, tx: Transaction) -> PayoutResponse:
        meta = metadata_of(tx)
        debit_currency = str(meta["debitCurrency"])
        return cls(
            PayoutId=tx.id,
            TransactionId=tx.id,
            UserId=tx.user_id,
            Status=TransactionStatus(tx.status),
            StatusReason=tx.status_reason,
            Provider=BankProvider(tx.provider),
            PaymentBatchId=meta.get("paymentBatchId"),
            Amount=from_minor(tx.amount_minor, tx.currency),
            Currency=tx.currency,
            DebitAmount=_amount(meta, "debitAmount"),
            DebitCurrency=debit_currency,
            Fee=from_minor(tx.fee_minor or 0, tx.fee_currency or debit_currency),
            FeeCurrency=tx.fee_currency or debit_currency,
            ExchangeRate=_amount(meta, "exchangeRate"),
            PayeeId=str(meta["payeeId"]),
            BudgetId=tx.budget_id or "",
            AccountId=str(meta["accountId"]),
            ApprovalId=str(meta["approvalId"]),
            Reference=meta.get("reference"),
            CreatedAt=tx.created_at,
            CompletedAt=tx.completed_at,
        )


class SandboxPayoutStatus(StrEnum):
    PROCESSING = "PROCESSING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"


class SandboxBatchStatus(StrEnum):
    PROCESSING = "PROCESSING"
    COMPLETED = "COMPLETED"
    CANCELLED = "CANCELLED"


class SandboxPayoutStatusChange(RequestModel):
    Status: Annotated[SandboxPayoutStatus, Field(strict=False)] = Field(
        description="What the provider does with the payment next."
    )


class SandboxBatchStatusChange(RequestModel):
    Status: Annotated[SandboxBatchStatus, Field(strict=False)] = Field(
        description="PROCESSING (the batch executes), COMPLETED (its payments complete) or "
        "CANCELLED (its payments fail and the money returns to the budget)."
    )


class PaymentBatchResponse(ResponseModel):
    PaymentBatchId: str
    Status: str = Field(description="The provider's batch status.")
    FxOrderId: str | None
    FxOrderStatus: str | None
    Payouts: list[PayoutResponse]
