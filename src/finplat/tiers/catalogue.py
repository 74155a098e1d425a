"""The tiers and card products every new company starts with.

Personal and business packages, with and without the banking provider's cards and IBAN, so a
partner can onboard any kind of user on day one and change the catalogue later.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from finplat.providers.names import BankProvider

CARDPROV = BankProvider.CARDPROV
SWITCHPROV = BankProvider.SWITCHPROV
BANKPROV = BankProvider.BANKPROV


@dataclass(frozen=True)
class ProductSpec:
    provider: BankProvider
    card_type: str  # VIRTUAL | PHYSICAL
    currency: str = "USD"

    @property
    def name(self) -> str:
        return f"{self.provider.value} {self.card_type.lower()} {self.currency} card"


@dataclass(frozen=True)
class TierSpec:
    name: str
    description: str
    account_type: str
    tier_level: int
    monthly_fee: Decimal
    yearly_fee: Decimal
    features: tuple[str, ...]
    is_default: bool
    includes_bankprov_cards: bool
    includes_bankprov_iban: bool
    providers: tuple[BankProvider, ...]

    @property
    def products(self) -> list[ProductSpec]:
        return [ProductSpec(p, kind) for p in self.providers for kind in ("VIRTUAL", "PHYSICAL")]


DEFAULT_TIERS: tuple[TierSpec, ...] = (
    TierSpec(
        name="Personal Basic",
        description="Virtual and physical cards from the card provider.",
        account_type="personal",
        tier_level=1,
        monthly_fee=Decimal("0.00"),
        yearly_fee=Decimal("0.00"),
        features=("CARDS",),
        is_default=True,
        includes_bankprov_cards=False,
        includes_bankprov_iban=False,
        providers=(CARDPROV,),
    ),
    TierSpec(
        name="Personal Plus",
        description="Cards from the card and switch providers, and a personal IBAN.",
        account_type="personal",
        tier_level=2,
        monthly_fee=Decimal("4.99"),
        yearly_fee=Decimal("49.90"),
        features=("CARDS", "PAYMENTS", "IBAN"),
        is_default=False,
        includes_bankprov_cards=False,
        includes_bankprov_iban=True,
        providers=(CARDPROV, SWITCHPROV),
    ),
    TierSpec(
        name="Personal Premium",
        description="Every card product, banking-provider cards and a personal IBAN.",
        account_type="personal",
        tier_level=3,
        monthly_fee=Decimal("9.99"),
        yearly_fee=Decimal("99.90"),
        features=("CARDS", "PAYMENTS", "IBAN", "FX"),
        is_default=False,
        includes_bankprov_cards=True,
        includes_bankprov_iban=True,
        providers=(CARDPROV, SWITCHPROV, BANKPROV),
    ),
    TierSpec(
        name="Business Basic",
        description="Company cards from the card provider.",
        account_type="business",
        tier_level=1,
        monthly_fee=Decimal("0.00"),
        yearly_fee=Decimal("0.00"),
        features=("CARDS",),
        is_default=True,
        includes_bankprov_cards=False,
        includes_bankprov_iban=False,
        providers=(CARDPROV,),
    ),
    TierSpec(
        name="Business Pro",
        description="Every card product, banking-provider cards, a business IBAN and payouts.",
        account_type="business",
        tier_level=2,
        monthly_fee=Decimal("29.00"),
        yearly_fee=Decimal("290.00"),
        features=("CARDS", "PAYMENTS", "IBAN", "FX", "PAYOUTS"),
        is_default=False,
        includes_bankprov_cards=True,
        includes_bankprov_iban=True,
        providers=(CARDPROV, SWITCHPROV, BANKPROV),
    ),
)
