"""The kinds of row in the merchant's statement and which way each moved the wallet."""

from __future__ import annotations

from enum import StrEnum


class MorTransactionType(StrEnum):
    COMPANY_FUNDING = "COMPANY_FUNDING"  # funding credited to the wallet
    CARD_TOPUP = "CARD_TOPUP"  # a card top-up (manual or automatic) paid from the wallet
    CARD_UNLOAD = "CARD_UNLOAD"  # a card's money back to the wallet, less its fee
    CARD_DECLINE_FEE = "CARD_DECLINE_FEE"  # a decline fee taken from a card (not the wallet)
    CHILD_FUNDING = "CHILD_FUNDING"  # sent to a child company's wallet
    PARENT_FUNDING = "PARENT_FUNDING"  # received from the parent company
    CARD_PURCHASE = "CARD_PURCHASE"  # a purchase with one of the merchant's cards


class MorWalletDirection(StrEnum):
    CREDIT = "CREDIT"
    DEBIT = "DEBIT"


DIRECTIONS: dict[MorTransactionType, MorWalletDirection | None] = {
    MorTransactionType.COMPANY_FUNDING: MorWalletDirection.CREDIT,
    MorTransactionType.CARD_TOPUP: MorWalletDirection.DEBIT,
    MorTransactionType.CARD_UNLOAD: MorWalletDirection.CREDIT,
    MorTransactionType.CARD_DECLINE_FEE: None,
    MorTransactionType.CHILD_FUNDING: MorWalletDirection.DEBIT,
    MorTransactionType.PARENT_FUNDING: MorWalletDirection.CREDIT,
    MorTransactionType.CARD_PURCHASE: None,
}
