"""Physical cards: the production and mailing fee quote of a product, and shipping an existing
card that waits for shipment.

A card waits for shipment while it is physical, not shipped and not yet in the holder's hands:
status `PENDING` (ordered) or `INACTIVE` (produced, awaiting delivery and activation). Any other
card is 409 `CARD_NOT_AWAITING_SHIPMENT` (`CARD_ALREADY_SHIPPED` once shipped).

Phases of a shipment (recovery points of the request's Idempotency-Key):
  started  -> quote the fees at the provider; lock the card, check it still waits for shipment,
              mark it shipped (`shipped_at`: no second shipment can start), reserve the fee
              (company master account -> fee revenue, pending); commit (`reserved`)
  reserved -> the provider ships the card under a key derived from the request's key;
              accepted -> post the fee, `card.shipped` event; refused -> void the fee, clear
              `shipped_at` (`rejected`, replayed); timeout / outage -> 503 with the fee still
              reserved: a retry with the same key resumes here
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards import lookup, programs
from finplat.cards.errors import CardTypeNotFound, CardTypeNotInTier, MasterAccountShort
from finplat.cards.models import Card
from finplat.cards.status import CardStatus
from finplat.errors import ApiError, Conflict, ValidationFailed
from finplat.events import service as events
from finplat.idempotency import service as idempotency
from finplat.idempotency.service import Claim
from finplat.kit.clock import utcnow
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.service import CompanyAccount
from finplat.providers.calls import commit_then_call
from finplat.providers.cards.port import DeliveryAddress, ShippingQuote
from finplat.providers.errors import ProviderRejected
from finplat.providers.registry import Providers
from finplat.tiers.repository import CardProductRepository
from finplat.users import service as users

PHYSICAL = "PHYSICAL"
RESERVED = "reserved"
REJECTED = "rejected"
SHIPPABLE = frozenset({CardStatus.PENDING.value, CardStatus.INACTIVE.value})
SHIPPING_LEDGER_CODE = "card.shipping"


class CardTypeNotPhysical(Conflict):
    code = "CARD_TYPE_NOT_PHYSICAL"
    message = "The card product is virtual: it has no production or mailing fee."


class CardNotAwaitingShipment(Conflict):
    code = "CARD_NOT_AWAITING_SHIPMENT"


class CardAlreadyShipped(Conflict):
    code = "CARD_ALREADY_SHIPPED"
    message = "The card has already been shipped."


class UnknownCountry(ValidationFailed):
    code = "INVALID_COUNTRY"
    message = "country must be an ISO 3166-1 alpha-2 code (upper case)."


class ShipmentRejected(ApiError):
    """The provider's refusal, replayed when a rejected shipment is resumed."""


@dataclass(frozen=True)
class Quote:
    provider: str
    country: str
    fees: ShippingQuote

    @property
    def total_minor(self) -> int:
        return self.fees.production_fee_minor + self.fees.mailing_fee_minor


@dataclass(frozen=True)
class Shipment:
    card: Card
    quote: Quote
    address: DeliveryAddress
    transfer_id: int


async def _quote(
    session: AsyncSession, providers: Providers, *, company_id: int, provider: str, country: str
) -> Quote:
    program = programs.program_for(providers, provider)
    fees = await commit_then_call(
        session,
        providers.policy,
        provider=provider,
        operation="shipping_quote",
        call=lambda: program.shipping_quote(
            company_id=company_id, country=country, card_type=PHYSICAL
        ),
        idempotent=True,
    )
    return Quote(provider, country, fees)


async def product_fees(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    card_type_id: int,
    country: str,
) -> tuple[int, Quote]:
    """The fees of ordering `card_type_id` (a physical product of the user's tier) to
    `country`."""
    user = await users.get_user(session, company_id=company_id, user_id=user_id)
    product = await CardProductRepository(session, company_id).get(card_type_id)
    if product is None:
        raise CardTypeNotFound()
    if product.tier_id != user.tier_id:
        raise CardTypeNotInTier()
    if product.card_type != PHYSICAL:
        raise CardTypeNotPhysical()
    quote = await _quote(
        session, providers, company_id=company_id, provider=product.provider, country=country
    )
    return product.id, quote


def _awaiting_shipment(card: Card) -> None:
    if card.card_type != PHYSICAL:
        raise CardNotAwaitingShipment("Only physical cards are shipped.")
    if card.shipped_at is not None:
        raise CardAlreadyShipped()
    if card.status not in SHIPPABLE:
        raise CardNotAwaitingShipment(
            "Only a physical card waiting for shipment (PENDING or INACTIVE) can be shipped "
            f"(the card is {card.status})."
        )
    if card.provider_card_id is None:
        raise CardNotAwaitingShipment("The provider has not issued the card yet.")


def own_address(card: Card) -> DeliveryAddress:
    if card.delivery_address is None:
        raise CardNotAwaitingShipment("The card has no delivery address: give one.")
    return DeliveryAddress(**json.loads(card.delivery_address))


async def card_fees(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    card_id: int,
    country: str | None,
) -> tuple[Card, Quote]:
    """What shipping the card would cost, to `country` or else to its own address."""
    card = await lookup.user_card(session, company_id=company_id, user_id=user_id, card_id=card_id)
    _awaiting_shipment(card)
    destination = country or own_address(card).country
    return card, await _quote(
        session, providers, company_id=company_id, provider=card.provider, country=destination
    )


async def ship(
    session: AsyncSession,
    providers: Providers,
    *,
    claim: Claim,
    company_id: int,
    user_id: int,
    card_id: int,
    address: DeliveryAddress | None,
) -> Shipment:
    if claim.recovery_point == idempotency.STARTED:
        card = await lookup.user_card(
            session, company_id=company_id, user_id=user_id, card_id=card_id
        )
        _awaiting_shipment(card)
        destination = address or own_address(card)
        quote = await _quote(
            session,
            providers,
            company_id=company_id,
            provider=card.provider,
            country=destination.country,
        )
        card = await lookup.user_card(
            session, company_id=company_id, user_id=user_id, card_id=card_id, lock=True
        )
        _awaiting_shipment(card)
        pending_id = await _reserve_fee(session, claim, card, quote)
        card.shipped_at = utcnow()
        card.updated_at = utcnow()
        await idempotency.checkpoint(
            session,
            claim,
            RESERVED,
            pending_id=pending_id,
            address=asdict(destination),
            production=quote.fees.production_fee_minor,
            mailing=quote.fees.mailing_fee_minor,
            currency=quote.fees.currency,
        )
    else:
        await idempotency.checkpoint(session, claim, claim.recovery_point)
        if claim.recovery_point == REJECTED:
            error = claim.state["error"]
            raise ShipmentRejected(error["message"], status=error["status"], code=error["code"])
    state: dict[str, Any] = claim.state
    destination = DeliveryAddress(**state["address"])
    pending_id = int(state["pending_id"])
    card = await lookup.user_card(session, company_id=company_id, user_id=user_id, card_id=card_id)
    program = programs.program_of(providers, card)
    ref, key = card.provider_card_id, claim.derived_key("card-ship")
    assert ref is not None
    try:
        await commit_then_call(
            session,
            providers.policy,
            provider=card.provider,
            operation="ship",
            call=lambda: program.ship(
                company_id=company_id, card_id=ref, idempotency_key=key, address=destination
            ),
            idempotent=True,
        )
    except ProviderRejected as exc:
        await ledger.void_pending(session, company_id=company_id, pending_id=pending_id)
        card = await lookup.user_card(
            session, company_id=company_id, user_id=user_id, card_id=card_id, lock=True
        )
        card.shipped_at = None
        error = {"message": exc.message, "status": exc.status, "code": exc.code}
        await idempotency.checkpoint(session, claim, REJECTED, error=error)
        raise
    await ledger.post_pending(session, company_id=company_id, pending_id=pending_id)
    card = await lookup.user_card(
        session, company_id=company_id, user_id=user_id, card_id=card_id, lock=True
    )
    card.delivery_address = json.dumps(asdict(destination))
    card.updated_at = utcnow()
    quote = Quote(
        card.provider,
        destination.country,
        ShippingQuote(int(state["production"]), int(state["mailing"]), str(state["currency"])),
    )
    await events.record(
        session,
        company_id=company_id,
        type_="card.shipped",
        domain="card",
        provider=card.provider,
        data={
            "cardId": card.id,
            "userId": card.user_id,
            "country": destination.country,
            "feeMinor": quote.total_minor,
            "currency": quote.fees.currency,
            "transferId": pending_id,
        },
    )
    await session.flush()
    return Shipment(card, quote, destination, pending_id)


async def _reserve_fee(session: AsyncSession, claim: Claim, card: Card, quote: Quote) -> int:
    """Production and mailing fee: company master account -> fee revenue (pending until the
    provider ships). Too little in the master account is 409 `INSUFFICIENT_FUNDS`."""
    currency = quote.fees.currency
    kinds = [CompanyAccount.MASTER, CompanyAccount.FEE_REVENUE]
    found = await ledger.company_accounts_in(
        session, company_id=card.company_id, kinds=kinds, currency=currency
    )
    master, revenue = (found[kind] for kind in kinds)
    try:
        pending = await ledger.create_pending(
            session,
            company_id=card.company_id,
            legs=[Leg(master.id, -quote.total_minor), Leg(revenue.id, quote.total_minor)],
            code=SHIPPING_LEDGER_CODE,
            expires_at=None,  # the provider's answer settles it
            accounts=(master, revenue),
            reference=claim.derived_key("card-ship"),
            details={
                "cardId": card.id,
                "productionFee": quote.fees.production_fee_minor,
                "mailingFee": quote.fees.mailing_fee_minor,
            },
        )
    except ledger.InsufficientFunds:
        raise MasterAccountShort() from None
    return pending.transfer_id


def shipped_at(shipment: Shipment) -> datetime:
    assert shipment.card.shipped_at is not None
    return shipment.card.shipped_at
