"""The refusals of MOR card operations, one class per code a client can tell apart."""

from __future__ import annotations

from finplat.errors import Conflict, NotFound


class MorCardNotAssigned(Conflict):
    code = "MOR_CARD_NOT_ASSIGNED"
    message = "The card has no assignee; assign it to a user of the company first."


class MorCardAlreadyAssigned(Conflict):
    code = "MOR_CARD_ALREADY_ASSIGNED"
    message = "The card is assigned; unassign it first (its balance then returns to the wallet)."


class MorCardNotReassignable(Conflict):
    code = "MOR_CARD_NOT_REASSIGNABLE"
    message = (
        "A banking-provider card draws on its holder's budget and cannot be assigned to "
        "another user."
    )


class MorCardNotAssignedToUser(Conflict):
    code = "MOR_CARD_NOT_ASSIGNED_TO_USER"
    message = "The card is not assigned to this user."


class LoadRequestNotFound(NotFound):
    code = "MOR_LOAD_REQUEST_NOT_FOUND"
    message = "No such load request."


class LoadRequestNotPending(Conflict):
    code = "MOR_LOAD_REQUEST_NOT_PENDING"
    message = "The load request has been decided already."


class CardholderNotFound(NotFound):
    code = "MOR_CARDHOLDER_NOT_FOUND"
    message = "No such cardholder: the user holds no card of the company."
