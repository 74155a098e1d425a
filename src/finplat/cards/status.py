"""A card's lifecycle states (the spec's "States and transitions", card rows).

`Card.status` holds these values; the enum is a `str`, so it compares and stores as the plain
value.
"""

from __future__ import annotations

from enum import StrEnum

from finplat.providers.cards.port import ProviderCardStatus


class CardStatus(StrEnum):
    PENDING = "PENDING"
    INACTIVE = "INACTIVE"  # physical, produced, waiting for activation after delivery
    ACTIVE = "ACTIVE"
    FROZEN = "FROZEN"
    SYSTEM_BLOCKED = "SYSTEM_BLOCKED"  # an unpaid decline fee
    CANCELLED = "CANCELLED"


# What a card provider's status means here (its BLOCKED is the platform's decline-fee block).
PROVIDER_STATUS = {
    ProviderCardStatus.PENDING: CardStatus.PENDING,
    ProviderCardStatus.INACTIVE: CardStatus.INACTIVE,
    ProviderCardStatus.ACTIVE: CardStatus.ACTIVE,
    ProviderCardStatus.FROZEN: CardStatus.FROZEN,
    ProviderCardStatus.BLOCKED: CardStatus.SYSTEM_BLOCKED,
    ProviderCardStatus.CANCELLED: CardStatus.CANCELLED,
}
