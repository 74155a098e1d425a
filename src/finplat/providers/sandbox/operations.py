"""Every provider operation a sandbox fault can target, per provider."""

from __future__ import annotations

from enum import StrEnum

from finplat.providers.banking import sandbox as banking
from finplat.providers.banking_onboarding import sandbox as banking_onboarding
from finplat.providers.business_onboarding import sandbox as business_onboarding
from finplat.providers.cardissuing import sandbox as cardissuing
from finplat.providers.cards import sandbox as cards
from finplat.providers.crypto import sandbox as crypto
from finplat.providers.funding import sandbox as funding
from finplat.providers.identity import sandbox as identity
from finplat.providers.names import ExternalProvider
from finplat.providers.switching import sandbox as switching

OPERATIONS: dict[ExternalProvider, tuple[str, ...]] = {
    ExternalProvider.CARDPROV: cardissuing.OPERATIONS + cards.OPERATIONS,
    ExternalProvider.SWITCHPROV: switching.OPERATIONS + cards.OPERATIONS,
    # The bankprov capabilities share the provider's name space (`decide` is in two).
    ExternalProvider.BANKPROV: tuple(
        dict.fromkeys(
            banking_onboarding.OPERATIONS
            + business_onboarding.OPERATIONS
            + banking.OPERATIONS
            + cards.OPERATIONS
        )
    ),
    ExternalProvider.IDENTITY: identity.OPERATIONS,
    ExternalProvider.CRYPTO: crypto.OPERATIONS,
    ExternalProvider.FUNDING: funding.OPERATIONS,
}


def all_operations() -> list[str]:
    return sorted({op for ops in OPERATIONS.values() for op in ops})


# Every operation name, as an enum for request schemas.
ProviderOperation = StrEnum(  # type: ignore[misc]
    "ProviderOperation", {name: name for name in all_operations()}
)
