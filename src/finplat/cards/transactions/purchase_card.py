"""A card as a purchase's real-time decision sees it: plain values, read under the card's row
lock by one statement below SQLAlchemy's execution (`repository.card_to_decide`). The decision
reads the card on every authorization the network sends and changes nothing of it, so loading
the entity (the ORM's share of the decision was a quarter of its CPU) buys nothing."""

from __future__ import annotations

from dataclasses import dataclass

from finplat.cards.models import Card
from finplat.ledger.core import AccountTerms


@dataclass(frozen=True, slots=True)
class PurchaseCard:
    id: int
    company_id: int
    user_id: int
    provider: str
    currency: str
    status: str
    # None for a card whose ledger account is not opened yet: the decision opens it.
    ledger_account_id: int | None
    # The purchase's two sides (the card's account, the company's settlement account in the
    # card's currency) when read with the card: their terms never change, so the card's
    # statement can read them; else the decision reads them.
    account: AccountTerms | None = None
    settlement: AccountTerms | None = None

    @classmethod
    def of(cls, card: Card) -> PurchaseCard:
        """The values of a card the caller has loaded (and locked) as an entity."""
        return cls(
            card.id,
            card.company_id,
            card.user_id,
            card.provider,
            card.currency,
            card.status,
            card.ledger_account_id,
        )
