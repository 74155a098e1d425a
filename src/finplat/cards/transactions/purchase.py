"""The rules of a purchase, pure: what the ledger must hold and what the purchase's status is,
from the running totals of its events. Every event only adds to a total, so the result does not
depend on the order the network delivered them in:

* the hold is `authorized + incremented - reversed` (never below zero) until the purchase is
  cleared, declined or expired, and nothing after;
* the card has paid `cleared - refunded`: a clearing posts what it clears (from the hold as far
  as it reaches, directly beyond it), a refund credits the card back.

A reversal after clearing changes nothing (the network's way back after clearing is a refund);
an authorization that arrives after its clearing holds nothing.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol


class EventType(StrEnum):
    AUTHORIZATION = "AUTHORIZATION"
    INCREMENTAL = "INCREMENTAL"
    REVERSAL = "REVERSAL"
    CLEARING = "CLEARING"
    REFUND = "REFUND"
    DECLINE = "DECLINE"
    EXPIRY = "EXPIRY"


class PurchaseStatus(StrEnum):
    PENDING = "PENDING"  # events arrived, nothing authorized yet (a reversal before its auth)
    AUTHORIZED = "AUTHORIZED"  # money held on the card
    CLEARED = "CLEARED"
    REFUNDED = "REFUNDED"  # cleared, then refunded in full
    REVERSED = "REVERSED"  # released before clearing
    EXPIRED = "EXPIRED"  # hold released after the expiry period, never cleared
    DECLINED = "DECLINED"


class Totals(Protocol):
    authorized_minor: int
    incremented_minor: int
    reversed_minor: int
    cleared_minor: int
    refunded_minor: int
    declined: bool
    expired: bool


def hold_due(t: Totals) -> int:
    if t.cleared_minor > 0 or t.declined or t.expired:
        return 0
    return max(0, t.authorized_minor + t.incremented_minor - t.reversed_minor)


def status_of(t: Totals) -> PurchaseStatus:
    if t.cleared_minor > 0:
        if t.refunded_minor >= t.cleared_minor:
            return PurchaseStatus.REFUNDED
        return PurchaseStatus.CLEARED
    if t.declined:
        return PurchaseStatus.DECLINED
    if hold_due(t) > 0:
        return PurchaseStatus.AUTHORIZED
    if t.expired:
        return PurchaseStatus.EXPIRED
    if t.authorized_minor + t.incremented_minor > 0:
        return PurchaseStatus.REVERSED
    return PurchaseStatus.PENDING
