"""The providers behind the API, by the names and numbers the spec gives them."""

from __future__ import annotations

from enum import IntEnum, StrEnum


class BankProvider(StrEnum):
    """The `Provider` field of returned resources (`BankProvider` in the spec)."""

    CARDPROV = "cardprov"
    BANKPROV = "bankprov"
    SWITCHPROV = "switchprov"


class ProviderType(IntEnum):
    CARDPROV = 1
    BANKPROV = 2
    SWITCHPROV = 3


def provider_type(provider: BankProvider) -> ProviderType:
    return ProviderType[provider.name]


class ExternalProvider(StrEnum):
    """Every outside system the platform calls: the three account providers, identity
    verification, the crypto rails and the funding rail. Names faults, callbacks and logs."""

    CARDPROV = "cardprov"
    BANKPROV = "bankprov"
    SWITCHPROV = "switchprov"
    IDENTITY = "identity"
    CRYPTO = "crypto"
    FUNDING = "funding"
