"""Errors shared by every card module (lifecycle, funding, simulations)."""

from __future__ import annotations

from finplat.errors import Conflict, NotFound


class CardNotFound(NotFound):
    code = "CARD_NOT_FOUND"
    message = "No card with that id for this user in this company."


class CardCancelled(Conflict):
    code = "CARD_CANCELLED"
    message = "The card is cancelled: it accepts no further operation or money."


class MasterAccountShort(Conflict):
    """The company master account cannot pay for a card operation (the ledger's
    `InsufficientFunds`, said of the master account)."""

    code = "INSUFFICIENT_FUNDS"
    message = "The company master account does not have enough available funds."
