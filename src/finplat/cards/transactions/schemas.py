"""Wire shapes of card transactions (PascalCase, per the spec)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Path
from pydantic import Field

from finplat.cards import timestamps
from finplat.cards.transactions.models import CardTransaction, CardTransactionEvent
from finplat.cards.transactions.purchase import EventType, PurchaseStatus
from finplat.kit.money import DecimalAmount, from_minor
from finplat.kit.schemas import MAX_ID, PARAMETER_ID, ResponseModel

# An acquirer's merchant id (ISO 8583 field 42 is 15 characters; some acquirers use more).
MID_PATTERN = r"^[A-Za-z0-9_\-]{1,32}$"

CardTransactionIdPath = Annotated[
    int,
    Path(ge=1, le=MAX_ID, description="The card transaction's `Id`."),
    PARAMETER_ID,
]


class RuleFired(ResponseModel):
    RuleId: int
    Name: str | None
    RuleType: str
    Shadow: bool = Field(description="Evaluated in shadow mode: recorded, never declining.")
    Reason: str


class CardPurchaseEvent(ResponseModel):
    Type: EventType
    Amount: DecimalAmount
    DeclineReason: str | None
    ProviderEventId: str
    OccurredAt: datetime | None = Field(
        description="The provider's timestamp, parsed; null when missing or invalid."
    )
    ReceivedAt: datetime

    @classmethod
    def of(cls, event: CardTransactionEvent, currency: str) -> CardPurchaseEvent:
        return cls(
            Type=EventType(event.type),
            Amount=from_minor(event.amount_minor, currency),
            DeclineReason=event.decline_reason,
            ProviderEventId=event.provider_event_id,
            OccurredAt=timestamps.parse(event.occurred_at),
            ReceivedAt=event.received_at,
        )


class CardPurchase(ResponseModel):
    Id: int
    AuthorizationId: str
    CardId: int
    UserId: int
    Provider: str
    Status: PurchaseStatus
    Currency: str
    Merchant: str | None
    Mcc: str | None
    Country: str | None
    Mid: str | None = Field(description="The acquirer's merchant id, when the network sent it.")
    RequestedAmount: DecimalAmount
    AuthorizedAmount: DecimalAmount = Field(description="Authorized, incremental included.")
    HeldAmount: DecimalAmount = Field(
        description="Held on the card now (pending debit); 0 for a partner-hosted purchase, "
        "whose money the partner holds."
    )
    ReversedAmount: DecimalAmount
    ClearedAmount: DecimalAmount
    RefundedAmount: DecimalAmount
    DeclineReason: str | None
    ResponseCode: str | None
    RulesFired: list[RuleFired]
    PartnerDecision: Literal["PARTNER", "STAND_IN", "PROVIDER"] | None = Field(
        default=None,
        description="Partner-hosted balances: who decided the purchase (`PARTNER`; "
        "`STAND_IN`, the company's `FallbackDecision` when the partner did not answer in "
        "time; `PROVIDER`, authorized by the card provider without asking). Null when the "
        "money is in finplat's ledger.",
    )
    AuthorizedAt: datetime | None
    CreatedAt: datetime
    UpdatedAt: datetime
    Events: list[CardPurchaseEvent]

    @classmethod
    def of(cls, txn: CardTransaction, events: list[CardTransactionEvent]) -> CardPurchase:
        def money(minor: int) -> Any:
            return from_minor(minor, txn.currency)

        return cls(
            Id=txn.id,
            AuthorizationId=txn.authorization_id,
            CardId=txn.card_id,
            UserId=txn.user_id,
            Provider=txn.provider,
            Status=PurchaseStatus(txn.status),
            Currency=txn.currency,
            Merchant=txn.merchant,
            Mcc=txn.mcc,
            Country=txn.country,
            Mid=txn.mid,
            RequestedAmount=money(txn.requested_minor),
            AuthorizedAmount=money(txn.authorized_minor + txn.incremented_minor),
            HeldAmount=money(txn.held_minor),
            ReversedAmount=money(txn.reversed_minor),
            ClearedAmount=money(txn.cleared_minor),
            RefundedAmount=money(txn.refunded_minor),
            DeclineReason=txn.decline_reason,
            PartnerDecision=txn.partner_decision,
            ResponseCode=txn.response_code,
            RulesFired=[RuleFired(**r) for r in json.loads(txn.rules_fired)],
            AuthorizedAt=txn.authorized_at,
            CreatedAt=txn.created_at,
            UpdatedAt=txn.updated_at,
            Events=[CardPurchaseEvent.of(e, txn.currency) for e in events],
        )


class CardPurchasePage(ResponseModel):
    Items: list[CardPurchase]
    Page: int
    PageSize: int
    HasMore: bool
