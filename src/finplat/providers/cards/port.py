"""The card programme port: issuing and running cards at a card-issuing provider, and the card
issuer's cardholder accounts (the last section).

Three providers issue cards behind this one port: the card provider (`cardprov`), the switch
provider (`switchprov`, provider type 3) and the banking provider (`bankprov`, cards drawing
on a budget). Each is one `CardProgram` in the registry (`Providers.card_programs`).

The provider is the only holder of the full card number and CVV. They are never returned by
this port: `ProviderCard` carries the masked number only, and the full details are shown by
the provider's own page behind a short-lived, single-use widget URL.

Card transaction timestamps come as the provider sends them (ISO 8601 text, Unix seconds or
Unix milliseconds, or nothing); the platform parses them (`finplat.cards.timestamps`).

Asynchronous changes arrive as callbacks: `card.status_changed` `{cardId, status, reason}`
(for example PENDING → ACTIVE once the provider has produced the card),
`card.transaction` `{cardId, transactionId, authorizationId, type, status, amountMinor, currency,
merchant, mcc, country, declineReason, timestamp, mid?}`: one event of a purchase (`type`
AUTHORIZATION, INCREMENTAL, REVERSAL, CLEARING, REFUND, DECLINE or EXPIRY; `transactionId` the
event's own id, `authorizationId` the purchase's, common to all its events).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from typing import Protocol, runtime_checkable

from finplat.providers.errors import ProviderRejected

CARD_STATUS_CHANGED = "card.status_changed"
CARD_TRANSACTION = "card.transaction"


class CardFundsShort(ProviderRejected):
    """The provider holds less for the card than an unload asks for. Every adapter raises this
    one refusal, so the platform can tell the partner the card is short rather than that a
    provider refused (the provider can hold less than the ledger shows while a purchase it
    approved has not reached the platform yet)."""

    status = 400
    code = "PROVIDER_INSUFFICIENT_FUNDS"
    message = "The card's balance does not cover the amount."


class CardUnknownAtProvider(ProviderRejected):
    """The provider does not expose the card: it cancelled it (a provider stops exposing a
    cancelled card) or never issued it under that id. Every adapter raises this one refusal,
    so the platform can tell the partner the card is cancelled when money reaches a card the
    provider closed meanwhile."""

    status = 404
    code = "PROVIDER_CARD_NOT_FOUND"
    message = "The card provider has no such card."


class ProviderCardStatus(StrEnum):
    PENDING = "PENDING"  # ordered; the provider has not produced it yet
    INACTIVE = "INACTIVE"  # physical card produced, waiting for activation after delivery
    ACTIVE = "ACTIVE"
    FROZEN = "FROZEN"  # temporary stop by the holder
    BLOCKED = "BLOCKED"  # stopped by the platform (an unpaid decline fee)
    CANCELLED = "CANCELLED"  # permanent


class CardAction(StrEnum):
    FREEZE = "freeze"
    UNFREEZE = "unfreeze"
    ACTIVATE = "activate"
    BLOCK = "block"
    UNBLOCK = "unblock"
    CANCEL = "cancel"


@dataclass(frozen=True)
class DeliveryAddress:
    name: str
    line1: str
    line2: str | None
    city: str
    postal_code: str
    country: str
    state: str | None = None


@dataclass(frozen=True)
class ProviderCard:
    card_id: str
    status: ProviderCardStatus
    card_type: str  # VIRTUAL | PHYSICAL
    currency: str
    masked_number: str  # at most the first six and the last four digits
    last4: str
    expiry_month: int
    expiry_year: int
    balance_minor: int  # what the provider holds for the card
    auto_lock: bool  # whether the card locks itself after each approved purchase
    created_at: datetime
    updated_at: datetime  # when any of the above last changed: the answer is the card as then


@dataclass(frozen=True)
class CardMovement:
    """Money loaded onto or taken off a card."""

    movement_id: str
    status: str  # COMPLETED | PENDING
    amount_minor: int
    balance_minor: int


@dataclass(frozen=True, slots=True)
class LoadOrder:
    """One load of a bulk call: what `CardProgram.load` takes."""

    company_id: int
    card_id: str
    idempotency_key: str
    amount_minor: int


@dataclass(frozen=True)
class ProviderCardTransaction:
    transaction_id: str
    type: str  # AUTHORIZATION | CLEARING | DECLINE | REVERSAL | LOAD | UNLOAD | FEE
    status: str  # PENDING | SETTLED | DECLINED | REVERSED
    amount_minor: int
    currency: str
    merchant: str | None
    decline_reason: str | None
    timestamp: str | int | None  # raw, as the provider sent it
    authorization_id: str | None = None  # the purchase it belongs to


@dataclass(frozen=True)
class WidgetSession:
    url: str
    expires_at: datetime


@dataclass(frozen=True)
class ShippingQuote:
    production_fee_minor: int
    mailing_fee_minor: int
    currency: str


class CardProgram(Protocol):
    """Every call that creates or moves something takes an idempotency key: a repeat with the
    same key returns the first answer."""

    name: str

    async def issue_card(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        holder_account_id: str,
        card_type: str,
        currency: str,
        nickname: str | None,
        budget_id: str | None,
        delivery_address: DeliveryAddress | None,
        design_id: str | None,
    ) -> ProviderCard: ...

    async def card(self, *, company_id: int, card_id: str) -> ProviderCard:
        """404 (`ProviderRejected`) when the provider no longer exposes the card."""
        ...

    async def list_cards(self, *, company_id: int, holder_account_id: str) -> list[ProviderCard]:
        """The holder's cards the provider still exposes (cancelled ones may be omitted)."""
        ...

    async def change_status(
        self, *, company_id: int, card_id: str, action: CardAction
    ) -> ProviderCard:
        """Freeze, unfreeze, activate, block, unblock or cancel. A cancelled card is closed
        for good and what it still held goes back to the programme, as when the provider
        cancels on its own (a funding can reach the card between the platform's last unload
        and the cancellation)."""
        ...

    async def set_pin(self, *, company_id: int, card_id: str, pin: str) -> None:
        """The PIN goes to the provider only; nothing keeps or logs it on the way."""
        ...

    async def set_auto_lock(self, *, company_id: int, card_id: str, enabled: bool) -> ProviderCard:
        """Auto-lock on or off. While on, the card locks itself after each approved purchase
        and declines the next ones (`AUTO_LOCKED`) until the holder unlocks it
        (`CardAction.UNFREEZE`); turning it off also unlocks the card."""
        ...

    async def load(
        self, *, company_id: int, card_id: str, idempotency_key: str, amount_minor: int
    ) -> CardMovement: ...

    async def unload(
        self, *, company_id: int, card_id: str, idempotency_key: str, amount_minor: int
    ) -> CardMovement: ...

    async def movement_by_key(
        self, *, company_id: int, idempotency_key: str
    ) -> CardMovement | None: ...

    async def widget(
        self, *, company_id: int, card_id: str, ttl_seconds: int, base_url: str = ""
    ) -> WidgetSession:
        """A single-use URL of the provider's page showing the full card details (under
        `base_url`, where the provider's page is served)."""
        ...

    async def transactions(
        self, *, company_id: int, card_id: str
    ) -> list[ProviderCardTransaction]: ...

    async def shipping_quote(
        self, *, company_id: int, country: str, card_type: str
    ) -> ShippingQuote: ...

    async def ship(
        self, *, company_id: int, card_id: str, idempotency_key: str, address: DeliveryAddress
    ) -> ProviderCard: ...


@runtime_checkable
class BulkCardLoads(Protocol):
    """A card programme that loads many cards in one call: one request to a provider with a
    bulk funding API, one transaction in the sandbox. The platform's batched top-ups use it."""

    async def load_many(self, orders: Sequence[LoadOrder]) -> list[CardMovement | None]:
        """Each order as `load` would make it (deduplicated by its key), answers in the
        orders' order. None for an order this call did not make (a card it cannot load as it
        is, a key already used, an injected fault): the caller makes that one with `load`,
        whose answer, refusal or failure is the order's own."""
        ...


@runtime_checkable
class CardSimulation(Protocol):
    """Sandbox only: purchases at merchants."""

    async def authorize(
        self,
        *,
        company_id: int,
        card_id: str,
        authorization_id: str,
        amount_minor: int,
        currency: str,
        merchant: str,
        mcc: str | None = None,
        country: str | None = None,
        platform_decline: str | None = None,
        just_in_time: bool = False,
        mid: str | None = None,
    ) -> ProviderCardTransaction:
        """The network's authorization after the platform's decision (`platform_decline` when
        the platform declined, `amount_minor` what it approved): the provider still declines
        on its own state (frozen, blocked, cancelled, `AUTO_LOCKED`, its balance short), or
        holds the amount. Reported as a `card.transaction` callback. With auto-lock on, an
        approved purchase locks the card. `just_in_time`: the money is not on the card but
        at a partner that approved it (partner-hosted balances): the card's own balance is
        neither checked nor moved, by this purchase or its later events."""
        ...

    async def purchase_event(
        self,
        *,
        company_id: int,
        card_id: str,
        authorization_id: str,
        type_: str,
        amount_minor: int | None,
        just_in_time: bool = False,
    ) -> ProviderCardTransaction:
        """A later event of an authorized purchase (CLEARING, REVERSAL, INCREMENTAL, REFUND),
        reported as a `card.transaction` callback. Without an amount a clearing or reversal
        takes what is still held. 404 for an unknown authorization, 409 for one that cannot
        take the event."""
        ...

    def new_authorization_id(self) -> str:
        """The id the network gives a new purchase."""
        ...

    async def cancel_on_its_own(self, *, company_id: int, card_id: str) -> ProviderCard:
        """The provider cancels the card without being asked (suspected fraud, a closed
        programme): what the card held goes back to the programme, and a
        `card.status_changed` callback reports `CANCELLED` with reason `provider`."""
        ...


# ------------------------------------------------------------------------------------------------
# The card issuer (`cardprov`): the cardholder account a user's card-provider cards belong to,
# opened once per user (the switch provider opens programme links for the same holders).


ACCOUNT_REVIEWED = "account.reviewed"


@dataclass(frozen=True)
class Cardholder:
    """The person an account is opened for; `ssn` is forwarded from identity verification."""

    reference: str
    first_name: str
    last_name: str
    email: str
    phone: str
    date_of_birth: date
    country: str
    address: str | None = None
    city: str | None = None
    zip_code: str | None = None
    ssn: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class HolderAccount:
    account_id: str
    status: str  # ACTIVE, PENDING (the provider's own checks are running) or REJECTED


class CardIssuer(Protocol):
    name: str

    async def create_account(self, *, company_id: int, holder: Cardholder) -> HolderAccount:
        """Idempotent by `holder.reference`: one account per reference, ever."""
        ...


@runtime_checkable
class AccountReviewSimulation(Protocol):
    """Sandbox only: decide an account the provider left pending."""

    async def review_account(self, *, company_id: int, reference: str, approved: bool) -> None: ...
