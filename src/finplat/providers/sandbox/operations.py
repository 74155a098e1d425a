"""Every provider operation a sandbox fault can target, per provider."""

from __future__ import annotations

from enum import StrEnum

from finplat.providers.banking.sandbox import adapter as banking
from finplat.providers.banking_onboarding.sandbox import adapter as banking_onboarding
from finplat.providers.business_onboarding.sandbox import adapter as business_onboarding
from finplat.providers.cards.sandbox import adapter as cards
from finplat.providers.cards.sandbox import issuer
from finplat.providers.crypto.sandbox import adapter as crypto
from finplat.providers.crypto.sandbox import withdrawals as crypto_withdrawals
from finplat.providers.funding.sandbox import adapter as funding
from finplat.providers.identity.sandbox import adapter as identity
from finplat.providers.names import ExternalProvider
from finplat.providers.switching.sandbox import adapter as switching

OPERATIONS: dict[ExternalProvider, tuple[str, ...]] = {
    ExternalProvider.CARDPROV: issuer.OPERATIONS + cards.OPERATIONS,
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
    ExternalProvider.CRYPTO: crypto.OPERATIONS + crypto_withdrawals.OPERATIONS,
    ExternalProvider.FUNDING: funding.OPERATIONS,
}


def all_operations() -> list[str]:
    return sorted({op for ops in OPERATIONS.values() for op in ops})


# Every operation name, as an enum for request schemas.
ProviderOperation = StrEnum(  # type: ignore[misc]
    "ProviderOperation", {name: name for name in all_operations()}
)
