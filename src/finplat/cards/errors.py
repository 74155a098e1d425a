"""The card errors every card module raises (the card itself, its controls, funding and the
sandbox's simulations), one class per answer the spec or the partner can tell apart."""

from __future__ import annotations

import json

from finplat.errors import Conflict, NotFound, Unauthorized


class CardNotFound(NotFound):
    code = "CARD_NOT_FOUND"
    message = "No card with that id for this user in this company."


class CardTypeNotFound(NotFound):
    code = "CARD_TYPE_NOT_FOUND"
    message = "No card product with that CardTypeId."


class UserOfAnotherCompany(Unauthorized):
    code = "USER_OUTSIDE_COMPANY"
    message = "The user does not belong to the authenticated company."


class CardCancelled(Conflict):
    code = "CARD_CANCELLED"
    message = "The card is cancelled: it accepts no further operation or money."


class MasterAccountShort(Conflict):
    """The company master account cannot pay for a card operation (the ledger's
    `InsufficientFunds`, said of the master account)."""

    code = "INSUFFICIENT_FUNDS"
    message = "The company master account does not have enough available funds."


# ------------------------------------------------------------------------------------ order


class CardTypeNotInTier(Conflict):
    code = "CARD_TYPE_NOT_IN_TIER"
    message = "The card product does not belong to the user's tier."


class CardBudgetRequired(Conflict):
    code = "CARD_BUDGET_REQUIRED"
    message = "Banking-provider cards need a BudgetId."


class CardBudgetNotAllowed(Conflict):
    code = "CARD_BUDGET_NOT_ALLOWED"
    message = "Only banking-provider cards draw on a budget."


class CardDeliveryAddressRequired(Conflict):
    code = "CARD_DELIVERY_ADDRESS_REQUIRED"
    message = "Physical cards need a DeliveryAddress."


class CardDesignRequired(Conflict):
    code = "CARD_DESIGN_REQUIRED"

    def __init__(self, designs: tuple[str, ...]) -> None:
        super().__init__(f"Physical cards need a DesignId: one of {', '.join(designs)}.")


class CardDesignNotOffered(Conflict):
    code = "CARD_DESIGN_NOT_OFFERED"
    message = "Virtual cards take no DesignId and no DeliveryAddress."


class CardProductCurrencyMismatch(Conflict):
    """The order names another currency than the product's (money in another currency than
    the card's is funding's `CardCurrencyMismatch`, of the same code)."""

    code = "CARD_CURRENCY_MISMATCH"

    def __init__(self, product_currency: str) -> None:
        super().__init__(f"The card product is issued in {product_currency}.")


class CardProviderAccountNotApproved(Conflict):
    code = "CARD_PROVIDER_ACCOUNT_NOT_APPROVED"

    def __init__(self, provider: str, status: str) -> None:
        super().__init__(f"The user's {provider} account is not approved yet ({status}).")


# ------------------------------------------------------------------------------ cancellation


class CardCancellationNotSupported(Conflict):
    code = "CARD_CANCELLATION_NOT_SUPPORTED"
    message = "Only card-provider cards can be cancelled permanently."


class CardBalanceNotZero(Conflict):
    code = "CARD_BALANCE_NOT_ZERO"
    message = (
        "The card still holds money: a pending purchase, or a funding in flight or completed "
        "meanwhile. Try again once it has settled."
    )


# ---------------------------------------------------------------------------------- state


class CardStateConflict(Conflict):
    """The card's status does not allow the operation; the message says which status."""

    code = "CARD_STATE_CONFLICT"

    def __init__(self, what: str, status: str) -> None:
        super().__init__(f"{what} (the card is {status}).")


class CardSystemBlocked(Conflict):
    code = "CARD_SYSTEM_BLOCKED"
    message = "The card is blocked until its outstanding decline fee is paid."


class CardControlSuperseded(Conflict):
    """A control the provider applied and then overtook with a later change to the card
    before its answer came back: the card is not as the request asked."""

    code = "CARD_CONTROL_SUPERSEDED"

    def __init__(self, control: str, now: str, *, status: str, auto_lock: bool) -> None:
        super().__init__(
            f"A later change to the card decided its state: {now}. This {control} did not take "
            "effect; send it again if it is still wanted.",
            details=json.dumps({"status": status, "autoLockEnabled": auto_lock}),
        )


class PinTooSimple(Conflict):
    code = "CARD_PIN_TOO_SIMPLE"
    message = "The PIN is too easy to guess: no six equal digits and no consecutive run."


class CardNotIssued(Conflict):
    code = "CARD_NOT_ISSUED"
    message = "The provider has not issued the card yet."
