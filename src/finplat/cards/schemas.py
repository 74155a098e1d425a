"""Card wire schemas (PascalCase; the spec's exceptions `cardNo`, `cvv` and the auto-lock
body's `enabled` keep their lower-case names)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Literal

from fastapi import Path
from pydantic import ConfigDict, Field

from finplat.banking.schemas import BudgetIdField
from finplat.cards.models import Card
from finplat.cards.status import CardStatus
from finplat.kit.fields import CountryCode, E164Phone, SafeText
from finplat.kit.money import DecimalAmount
from finplat.kit.schemas import MAX_ID, PARAMETER_ID, BodyId, RequestModel, ResponseModel
from finplat.providers.names import BankProvider, ProviderType, provider_type

CardIdPath = Annotated[
    int, Path(ge=1, le=MAX_ID, description="The card's local `Id`."), PARAMETER_ID
]

# The design catalogue of physical card products (virtual cards have no design).
PHYSICAL_DESIGNS = ("classic", "midnight")


class Design(StrEnum):
    CLASSIC = "classic"
    MIDNIGHT = "midnight"


class CardOrderCurrency(StrEnum):
    USD = "USD"
    EUR = "EUR"
    GBP = "GBP"


class DeliveryAddressBody(RequestModel):
    Name: Annotated[SafeText, Field(min_length=1, max_length=100)]
    Line1: Annotated[SafeText, Field(min_length=1, max_length=100)]
    Line2: Annotated[SafeText, Field(max_length=100)] | None = None
    City: Annotated[SafeText, Field(min_length=1, max_length=60)]
    PostalCode: Annotated[SafeText, Field(min_length=1, max_length=16)]
    Country: CountryCode
    State: Annotated[SafeText, Field(max_length=60)] | None = None


class CardOrder(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "description": "Rules that depend on the card product (`CardTypeId`) cannot be "
            "stated here and answer 409: `BudgetId` is required for banking-provider products "
            "(`CARD_BUDGET_REQUIRED`) and refused for the others (`CARD_BUDGET_NOT_ALLOWED`); "
            "physical products need `DeliveryAddress` (`CARD_DELIVERY_ADDRESS_REQUIRED`) and "
            "a `DesignId` from their catalogue (`CARD_DESIGN_REQUIRED`), virtual products take "
            "neither (`CARD_DESIGN_NOT_OFFERED`); `Currency`, when given, must be the "
            "product's (`CARD_CURRENCY_MISMATCH`)."
        }
    )

    UserId: BodyId = Field(description="The card holder's `Id`.")
    CardTypeId: BodyId = Field(description="A card product of the user's tier (`CardTypeId`).")
    Phone: E164Phone
    ExternalCardId: Annotated[SafeText, Field(min_length=1, max_length=255)] | None = None
    Currency: Annotated[CardOrderCurrency, Field(strict=False)] | None = Field(
        default=None,
        description="A closed list (`USD`, `EUR`, `GBP`): the card's balance is held in this "
        "currency, which must be its product's (409 `CARD_CURRENCY_MISMATCH`).",
    )
    CardName: Annotated[SafeText, Field(min_length=1, max_length=100)] | None = Field(
        default=None, description="Shown as the card's `Nickname`."
    )
    BudgetId: BudgetIdField | None = Field(
        default=None, description="Banking-provider cards only: the budget the card draws on."
    )
    AutoLockEnabled: bool = False
    DeliveryAddress: DeliveryAddressBody | None = Field(
        default=None, description="Physical cards only, required for them; must be complete."
    )
    DesignId: Annotated[Design, Field(strict=False)] | None = Field(
        default=None,
        description="The design identifier. A closed list: the card provider prints the "
        "physical products' designs `classic` and `midnight` (required for them); virtual "
        "products have no design.",
    )


class CardResponse(ResponseModel):
    Id: int = Field(description="The local card id, used for every later card action.")
    UserId: int
    ExternalCardId: str | None
    Nickname: str | None
    CardType: Literal["VIRTUAL", "PHYSICAL"]
    Status: CardStatus
    Currency: str
    CardTypeId: int
    TierId: int
    AutoLockEnabled: bool
    Provider: BankProvider
    ProviderType: ProviderType
    BudgetId: str | None
    DesignId: str | None
    MaskedNumber: str | None = Field(description="At most the first six and last four digits.")
    Last4: str | None
    ExpiryMonth: int | None
    ExpiryYear: int | None
    cardNo: Literal[""] = Field(default="", description="Always empty (spec).")
    cvv: Literal["***"] = Field(default="***", description="Always `***` (spec).")
    AvailableBalance: DecimalAmount
    PostedBalance: DecimalAmount
    PinSet: bool
    CreatedAt: datetime
    UpdatedAt: datetime
    CancelledAt: datetime | None

    @classmethod
    def of(cls, card: Card, *, available: Decimal, posted: Decimal) -> CardResponse:
        provider = BankProvider(card.provider)
        return cls(
            Id=card.id,
            UserId=card.user_id,
            ExternalCardId=card.external_card_id,
            Nickname=card.nickname,
            CardType=card.card_type,
            Status=CardStatus(card.status),
            Currency=card.currency,
            CardTypeId=card.card_product_id,
            TierId=card.tier_id,
            AutoLockEnabled=card.auto_lock_enabled,
            Provider=provider,
            ProviderType=provider_type(provider),
            BudgetId=card.budget_id,
            DesignId=card.design_id,
            MaskedNumber=card.masked_number,
            Last4=card.last4,
            ExpiryMonth=card.expiry_month,
            ExpiryYear=card.expiry_year,
            AvailableBalance=available,
            PostedBalance=posted,
            PinSet=card.pin_set,
            CreatedAt=card.created_at,
            UpdatedAt=card.updated_at,
            CancelledAt=card.cancelled_at,
        )


class CardsResponse(ResponseModel):
    Cards: list[CardResponse]


class WidgetResponse(ResponseModel):
    Url: str = Field(
        description="The provider's page showing the full card details; single use, "
        "short-lived (its token is in the fragment)."
    )
    ExpiresAt: datetime


class CardTransactionType(StrEnum):
    AUTHORIZATION = "AUTHORIZATION"
    CLEARING = "CLEARING"
    DECLINE = "DECLINE"
    REVERSAL = "REVERSAL"
    LOAD = "LOAD"
    UNLOAD = "UNLOAD"
    FEE = "FEE"


class CardTransactionStatus(StrEnum):
    PENDING = "PENDING"
    SETTLED = "SETTLED"
    DECLINED = "DECLINED"
    REVERSED = "REVERSED"


class CardTransactionResponse(ResponseModel):
    TransactionId: str
    CardId: int
    Type: CardTransactionType
    Status: CardTransactionStatus
    Amount: DecimalAmount
    Currency: str
    Merchant: str | None
    DeclineReason: str | None
    OccurredAt: datetime | None = Field(
        description="The provider's timestamp (ISO 8601, Unix seconds or milliseconds), "
        "parsed; null when missing or invalid."
    )


class CardTransactionsPage(ResponseModel):
    Items: list[CardTransactionResponse]
    Page: int
    PageSize: int
    HasMore: bool
