"""Physical cards: production and mailing fee quotes, and shipping a card that waits for it."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import Query, Request
from pydantic import Field

from finplat.cards.physical import service as physical
from finplat.cards.schemas import CardIdPath, DeliveryAddressBody
from finplat.cards.status import CardStatus
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.fields import COUNTRY_CODES
from finplat.kit.money import DecimalAmount, from_minor
from finplat.kit.schemas import (
    MAX_ID,
    PARAMETER_ID,
    RequestModel,
    ResponseModel,
    UserIdQuery,
)
from finplat.providers.cards.port import DeliveryAddress
from finplat.providers.names import BankProvider

router = api_router(tags=["Cards"])

CountryQuery = Annotated[
    str,
    Query(
        description="ISO 3166-1 alpha-2 code of the destination country.",
        json_schema_extra={"enum": list(COUNTRY_CODES)},
    ),
]
CardTypeIdQuery = Annotated[
    int,
    Query(ge=1, le=MAX_ID, description="A physical card product of the user's tier."),
    PARAMETER_ID,
]


class PhysicalCardFees(ResponseModel):
    CardTypeId: int
    Country: str
    ProductionFee: DecimalAmount
    MailingFee: DecimalAmount
    TotalFee: DecimalAmount = Field(description="`ProductionFee` + `MailingFee`.")
    Currency: str
    Provider: BankProvider


class ShippingQuoteResponse(ResponseModel):
    CardId: int
    Country: str
    ProductionFee: DecimalAmount
    MailingFee: DecimalAmount
    TotalFee: DecimalAmount = Field(description="`ProductionFee` + `MailingFee`.")
    Currency: str
    Provider: BankProvider


class ShipmentRequest(RequestModel):
    DeliveryAddress: DeliveryAddressBody | None = Field(
        default=None,
        description="Where to send the card; omitted: the address given when it was ordered.",
    )


class DeliveryAddressView(ResponseModel):
    Name: str
    Line1: str
    Line2: str | None
    City: str
    PostalCode: str
    Country: str
    State: str | None


class ShipmentResponse(ShippingQuoteResponse):
    Status: CardStatus = Field(description="The card's status (unchanged by shipping).")
    ShippedAt: datetime
    DeliveryAddress: DeliveryAddressView
    TransferId: int = Field(description="The ledger transfer that charged the fee.")


def _country(value: str) -> str:
    if value not in COUNTRY_CODES:
        raise physical.UnknownCountry()
    return value


@router.get(
    "/api/v2/cards/physical-card-fees",
    response_model=PhysicalCardFees,
    summary="Production and mailing fees of a physical card",
    description="The provider's quote for producing a card of `cardTypeId` (a physical "
    "product of the user's tier) and mailing it to `country`. 404 for an unknown user or "
    "product; 409 `CARD_TYPE_NOT_IN_TIER` for a product of another tier, "
    "`CARD_TYPE_NOT_PHYSICAL` for a virtual one.",
    responses=error_responses(400, 404, 409, 503),
)
async def cards_physical_fees(
    userId: UserIdQuery,
    country: CountryQuery,
    cardTypeId: CardTypeIdQuery,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> PhysicalCardFees:
    product_id, quote = await physical.product_fees(
        session,
        providers,
        company_id=principal.company_id,
        user_id=userId,
        card_type_id=cardTypeId,
        country=_country(country),
    )
    fees = quote.fees
    return PhysicalCardFees(
        CardTypeId=product_id,
        Country=quote.country,
        ProductionFee=from_minor(fees.production_fee_minor, fees.currency),
        MailingFee=from_minor(fees.mailing_fee_minor, fees.currency),
        TotalFee=from_minor(quote.total_minor, fees.currency),
        Currency=fees.currency,
        Provider=BankProvider(quote.provider),
    )


SHIPPING_RULES = (
    "Only a physical card waiting for shipment can be shipped: status `PENDING` (ordered) or "
    "`INACTIVE` (produced, awaiting delivery), not shipped yet; otherwise 409 "
    "`CARD_NOT_AWAITING_SHIPMENT` (`CARD_ALREADY_SHIPPED` once shipped)."
)


@router.get(
    "/api/v2/cards/{cardId}/bulk-ship/quote",
    response_model=ShippingQuoteResponse,
    summary="Quote shipping a physical card",
    description="The production and mailing fees of shipping the card to `country`, or to "
    "its own delivery address when `country` is omitted. " + SHIPPING_RULES,
    responses=error_responses(400, 404, 409, 503),
)
async def cards_bulk_ship_quote(
    cardId: CardIdPath,
    userId: UserIdQuery,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    country: Annotated[
        str | None,
        Query(
            description="ISO 3166-1 alpha-2 destination; default: the card's own address.",
            json_schema_extra={"enum": list(COUNTRY_CODES)},
        ),
    ] = None,
) -> ShippingQuoteResponse:
    card, quote = await physical.card_fees(
        session,
        providers,
        company_id=principal.company_id,
        user_id=userId,
        card_id=cardId,
        country=_country(country) if country is not None else None,
    )
    fees = quote.fees
    return ShippingQuoteResponse(
        CardId=card.id,
        Country=quote.country,
        ProductionFee=from_minor(fees.production_fee_minor, fees.currency),
        MailingFee=from_minor(fees.mailing_fee_minor, fees.currency),
        TotalFee=from_minor(quote.total_minor, fees.currency),
        Currency=fees.currency,
        Provider=BankProvider(quote.provider),
    )


@router.post(
    "/api/v2/cards/{cardId}/bulk-ship",
    response_model=ShipmentResponse,
    summary="Ship a physical card",
    description="The provider ships the card to `DeliveryAddress` (default: the address "
    "given when it was ordered). The production and mailing fees are charged to the "
    "company's master account (to fee revenue); too little there is 409 "
    "`INSUFFICIENT_FUNDS`. " + SHIPPING_RULES + " A provider timeout is 503 with the fee "
    "reserved: retry with the same `Idempotency-Key` to finish it.",
    responses=error_responses(400, 404, 409, 503),
)
async def cards_bulk_ship(
    cardId: CardIdPath,
    userId: UserIdQuery,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    body: ShipmentRequest | None = None,
    idempotency_key: IdempotencyKeyHeader = None,
) -> ShipmentResponse:
    given = body.DeliveryAddress if body is not None else None
    address = (
        DeliveryAddress(
            name=given.Name,
            line1=given.Line1,
            line2=given.Line2,
            city=given.City,
            postal_code=given.PostalCode,
            country=given.Country,
            state=given.State,
        )
        if given is not None
        else None
    )
    claim = await claim_request(request, session, principal, idempotency_key)
    shipment = await physical.ship(
        session,
        providers,
        claim=claim,
        company_id=principal.company_id,
        user_id=userId,
        card_id=cardId,
        address=address,
    )
    fees, sent = shipment.quote.fees, shipment.address
    return ShipmentResponse(
        CardId=shipment.card.id,
        Country=sent.country,
        ProductionFee=from_minor(fees.production_fee_minor, fees.currency),
        MailingFee=from_minor(fees.mailing_fee_minor, fees.currency),
        TotalFee=from_minor(shipment.quote.total_minor, fees.currency),
        Currency=fees.currency,
        Provider=BankProvider(shipment.card.provider),
        Status=CardStatus(shipment.card.status),
        ShippedAt=physical.shipped_at(shipment),
        DeliveryAddress=DeliveryAddressView(
            Name=sent.name,
            Line1=sent.line1,
            Line2=sent.line2,
            City=sent.city,
            PostalCode=sent.postal_code,
            Country=sent.country,
            State=sent.state,
        ),
        TransferId=shipment.transfer_id,
    )
