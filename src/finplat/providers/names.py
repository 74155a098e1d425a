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
