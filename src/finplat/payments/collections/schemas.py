from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated

from fastapi import Path
from pydantic import ConfigDict, Field

from finplat.banking.schemas import BudgetCurrency
from finplat.kit.fields import SafeText
from finplat.kit.money import AmountRange, DecimalAmount, from_minor, precision_by_currency
from finplat.kit.schemas import RequestModel, ResponseModel
from finplat.payments.collections.service import COLLECTION_ID_PATTERN, Collected
from finplat.payments.mandates.schemas import MAX_MANDATE, MandateIdField
from finplat.providers.names import BankProvider
from finplat.transactions.kinds import TransactionStatus

CollectionIdPath = Annotated[
    str,
    Path(pattern=COLLECTION_ID_PATTERN, description="The collection's `Id` the service returned."),
]


class CollectionCreate(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "MandateId": "mdt_0123456789abcdef01234567",
                "Amount": 25,
                "Currency": "EUR",
                "merchantReferenceId": "invoice-2026-117",
            },
            "anyOf": precision_by_currency("Currency", "Amount"),
        }
    )

    MandateId: MandateIdField
    Amount: Annotated[DecimalAmount, AmountRange(greater_than=Decimal(0), at_most=MAX_MANDATE)]
    Currency: Annotated[BudgetCurrency, Field(strict=False)] = Field(
        description="The mandate's currency."
    )
    merchantReferenceId: Annotated[SafeText, Field(min_length=1, max_length=64)] = Field(
        description="Your reference for this collection. Retrying with the same reference and "
        "terms answers the same collection; with other terms it is 400."
    )


class CollectionResponse(ResponseModel):
    Id: str
    MandateId: str
    UserId: int
    CompanyId: int
    Amount: DecimalAmount
    Currency: str
    merchantReferenceId: str
    Status: TransactionStatus = Field(
        description="`PENDING` until the banking provider has collected (`COMPLETED`) or "
        "failed it (`FAILED`); a pending or uncertain outcome is never reported completed."
    )
    FailureReason: str | None = Field(
        description="Why it failed: `INSUFFICIENT_FUNDS`, `MANDATE_CANCELLED`, "
        "`MANDATE_EXPIRED`, `MANDATE_NOT_ACTIVE`, `REFUSED_BY_PAYER_BANK`, "
        "`PROVIDER_NEVER_RECEIVED`, or the provider's refusal code."
    )
    StatusReason: str | None = Field(
        description="`PROVIDER_OUTCOME_UNCERTAIN` while the provider's answer is unknown "
        "(the money and the mandate's allowance stay reserved; reconciliation decides)."
    )
    TransactionId: int
    Provider: BankProvider
    CreatedAt: datetime
    UpdatedAt: datetime
    CompletedAt: datetime | None

    @classmethod
    def of(cls, collected: Collected) -> CollectionResponse:
        collection, tx = collected.collection, collected.transaction
        failed = tx.status == TransactionStatus.FAILED.value
        return cls(
            Id=collection.id,
            MandateId=collection.mandate_id,
            UserId=collection.user_id,
            CompanyId=collection.company_id,
            Amount=from_minor(collection.amount_minor, collection.currency),
            Currency=collection.currency,
            merchantReferenceId=collection.merchant_reference_id,
            Status=TransactionStatus(tx.status),
            FailureReason=tx.status_reason if failed else None,
            StatusReason=None if failed else tx.status_reason,
            TransactionId=tx.id,
            Provider=BankProvider(tx.provider),
            CreatedAt=collection.created_at,
            UpdatedAt=tx.updated_at,
            CompletedAt=tx.completed_at,
        )


class SandboxCollectionSettlement(RequestModel):
    model_config = ConfigDict(json_schema_extra={"example": {"Status": "COMPLETED"}})

    Status: Annotated[str, Field(pattern=r"^(COMPLETED|FAILED)$")]
    Reason: (
        Annotated[
            str,
            Field(pattern=r"^(INSUFFICIENT_FUNDS|MANDATE_CANCELLED|REFUSED_BY_PAYER_BANK)$"),
        ]
        | None
    ) = Field(default=None, description="Why it failed (with `FAILED`).")
