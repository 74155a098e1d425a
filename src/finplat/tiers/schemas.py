from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from finplat.kit.money import DecimalAmount, from_minor
from finplat.kit.schemas import ResponseModel
from finplat.providers import names
from finplat.providers.names import BankProvider, provider_type
from finplat.tiers.models import CardProduct, Tier


class TierResponse(ResponseModel):
    Id: int
    Name: str
    Description: str
    TierLevel: int
    AccountType: Literal["personal", "business"]
    MonthlyFee: DecimalAmount = Field(examples=[4.99])
    YearlyFee: DecimalAmount = Field(examples=[49.9])
    Features: list[str] = Field(examples=[["CARDS", "PAYMENTS"]])
    IsDefault: bool
    IsActive: bool
    IncludesBankprovCards: bool
    IncludesBankprovIban: bool
    CreatedAt: datetime
    UpdatedAt: datetime

    @classmethod
    def of(cls, tier: Tier) -> TierResponse:
        return cls(
            Id=tier.id,
            Name=tier.name,
            Description=tier.description,
            TierLevel=tier.tier_level,
            AccountType=tier.account_type,
            MonthlyFee=from_minor(tier.monthly_fee_minor, tier.fee_currency),
            YearlyFee=from_minor(tier.yearly_fee_minor, tier.fee_currency),
            Features=list(tier.features),
            IsDefault=tier.is_default,
            IsActive=tier.is_active,
            IncludesBankprovCards=tier.includes_bankprov_cards,
            IncludesBankprovIban=tier.includes_bankprov_iban,
            CreatedAt=tier.created_at,
            UpdatedAt=tier.updated_at,
        )


class TierList(ResponseModel):
    Tiers: list[TierResponse]


class CardProductResponse(ResponseModel):
    CardTypeId: int = Field(description="Pass as `CardTypeId` when ordering a card.")
    Name: str
    CardType: Literal["VIRTUAL", "PHYSICAL"]
    Provider: BankProvider
    ProviderType: names.ProviderType = Field(
        description="1 = cardprov, 2 = bankprov, 3 = switchprov."
    )
    Currency: str

    @classmethod
    def of(cls, product: CardProduct) -> CardProductResponse:
        provider = BankProvider(product.provider)
        return cls(
            CardTypeId=product.id,
            Name=product.name,
            CardType=product.card_type,
            Provider=provider,
            ProviderType=provider_type(provider),
            Currency=product.currency,
        )


class CardTierResponse(ResponseModel):
    TierId: int
    CardProducts: list[CardProductResponse]
