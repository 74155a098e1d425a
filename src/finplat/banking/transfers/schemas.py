"""Wire schemas of budget transfers and user-to-master transfers."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated

from fastapi import Path
from pydantic import ConfigDict, Field, JsonValue

from finplat.banking.identifiers import BUDGET_ID_PATTERN
from finplat.banking.schemas import AccountIdField, BudgetCurrency, BudgetIdField
from finplat.kit.fields import SafeText
from finplat.kit.money import AmountRange, DecimalAmount, exponent, from_minor, schema_number
from finplat.kit.schemas import RequestModel, ResponseModel
from finplat.providers.banking.port import BUDGET_CURRENCIES
from finplat.providers.names import BankProvider
from finplat.transactions.kinds import TransactionStatus
from finplat.transactions.models import Transaction
from finplat.transactions.service import metadata_of

MAX_TRANSFER = Decimal("1000000000")
MASTER = "master"  # `toBudgetId` in a master transfer's metadata

BudgetIdPath = Annotated[
    str,
    Path(
        pattern=BUDGET_ID_PATTERN,
        description="The source budget: a `BudgetId` the service returned for the user.",
    ),
]


def precision_branches() -> list[JsonValue]:
    """`anyOf` branches: 6 decimals for USDC and USDT, 2 for EUR, GBP and USD."""
    groups: dict[int, list[JsonValue]] = {}
    for code in BUDGET_CURRENCIES:
        groups.setdefault(exponent(code), []).append(code)
    return [
        {
            "properties": {
                "Currency": {"enum": codes},
                "Amount": {"multipleOf": schema_number(Decimal(1).scaleb(-places))},
            }
        }
        for places, codes in sorted(groups.items())
    ]


# Exactly one destination; `ExternalReferenceId` only for a transfer to the master account.
# Optional fields may be sent as null, which counts as absent.
DESTINATION_BRANCHES: list[JsonValue] = [
    {
        "title": "To another budget of the account",
        "required": ["DestinationBudgetId"],
        "properties": {
            "DestinationBudgetId": {"type": "string"},
            "ToMaster": {"const": False},
            "ExternalReferenceId": {"type": "null"},
        },
    },
    {
        "title": "To the company's master account",
        "required": ["ToMaster"],
        "properties": {"ToMaster": {"const": True}, "DestinationBudgetId": {"type": "null"}},
    },
]


class BudgetTransferRequest(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "AccountId": "bp_acc_0123456789abcdef01234567",
                "Amount": 25.5,
                "Currency": "EUR",
                "DestinationBudgetId": "bud_0123456789abcdef01234567",
                "Reference": "Savings",
            },
            "allOf": [
                {"anyOf": DESTINATION_BRANCHES},
                {"anyOf": precision_branches()},
            ],
        }
    )

    AccountId: AccountIdField
    Amount: Annotated[DecimalAmount, AmountRange(greater_than=Decimal(0), at_most=MAX_TRANSFER)] = (
        Field(
            description="At most 2 decimals for EUR, GBP and USD, 6 for USDC and USDT (more: "
            "400 `INVALID_TRANSFER_REQUEST`)."
        )
    )
    Currency: Annotated[BudgetCurrency, Field(strict=False)] = Field(
        description="Both budgets must hold it (409 `CURRENCY_NOT_IN_BUDGET`)."
    )
    DestinationBudgetId: BudgetIdField | None = Field(
        default=None,
        description="Another budget of the same account. Give either this or `ToMaster: true`.",
    )
    ToMaster: bool = Field(
        default=False,
        description="Transfer to the company's master account in `Currency` instead of a "
        "budget (a user-to-master transfer).",
    )
    ExternalReferenceId: Annotated[SafeText, Field(max_length=128)] | None = Field(
        default=None,
        description="User-to-master transfers only: your reference for the operation. Retrying "
        "with the same reference and the same terms (user, account, source budget, amount, "
        "currency) returns the first result and moves nothing again; other terms are 400 "
        "`REFERENCE_REUSED_WITH_DIFFERENT_TERMS`.",
    )
    Reference: Annotated[SafeText, Field(max_length=140)] | None = Field(
        default=None, description="Free text kept with the transaction."
    )


class BudgetTransferResponse(ResponseModel):
    TransactionId: int = Field(description="The transaction (`GET /api/v2/transactions/{id}`).")
    Status: TransactionStatus = Field(
        description="`COMPLETED` once the banking provider confirmed; `PENDING` while its "
        "answer is outstanding (the amount stays reserved); `FAILED` if it refused."
    )
    StatusReason: str | None
    Amount: DecimalAmount
    Currency: str
    FromBudgetId: str
    ToBudgetId: str | None = Field(description="Null for a transfer to the master account.")
    ToMaster: bool
    AccountId: str
    Provider: BankProvider
    ExternalReferenceId: str | None
    Reference: str | None
    CreatedAt: datetime
    CompletedAt: datetime | None

    @classmethod
    def of(cls, tx: Transaction) -> BudgetTransferResponse:
        meta = metadata_of(tx)
        to_budget = meta.get("toBudgetId")
        return cls(
            TransactionId=tx.id,
            Status=TransactionStatus(tx.status),
            StatusReason=tx.status_reason,
            Amount=from_minor(tx.amount_minor, tx.currency),
            Currency=tx.currency,
            FromBudgetId=str(meta.get("fromBudgetId") or tx.budget_id),
            ToBudgetId=None if to_budget == MASTER else to_budget,
            ToMaster=to_budget == MASTER,
            AccountId=str(meta.get("accountId")),
            Provider=BankProvider(tx.provider),
            ExternalReferenceId=meta.get("externalReferenceId"),
            Reference=meta.get("reference"),
            CreatedAt=tx.created_at,
            CompletedAt=tx.completed_at,
        )
