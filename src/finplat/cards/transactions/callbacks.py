"""Card providers' `card.transaction` callbacks: each purchase event (authorization,
incremental, reversal, clearing, refund, decline, expiry) reaches `service.apply` here, from a
real provider's webhook and from the sandbox alike. Loads, unloads and fees are answered to the
platform's own calls, not reported: such events are ignored."""

from __future__ import annotations

from typing import Annotated, Any

import structlog
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards.transactions import service
from finplat.cards.transactions.purchase import EventType
from finplat.cards.transactions.schemas import MID_PATTERN
from finplat.kit.fields import SafeText
from finplat.providers import inbound
from finplat.providers.cards.port import CARD_TRANSACTION
from finplat.providers.names import BankProvider

log = structlog.get_logger("finplat.cards.transactions")
_Id = Annotated[SafeText, Field(min_length=1, max_length=64)]


class _TransactionData(BaseModel):
    model_config = ConfigDict(extra="ignore")

    cardId: _Id
    transactionId: _Id
    # Older payloads carry no purchase id: the event is then its own purchase.
    authorizationId: _Id | None = None
    type: Annotated[str, Field(max_length=16)]
    amountMinor: Annotated[int, Field(ge=0, le=10**15)]
    currency: Annotated[str, Field(min_length=3, max_length=8)]
    merchant: Annotated[SafeText, Field(max_length=100)] | None = None
    mcc: Annotated[str, Field(pattern=r"^[0-9]{4}$")] | None = None
    country: Annotated[str, Field(pattern=r"^[A-Z]{2}$")] | None = None
    declineReason: Annotated[SafeText, Field(max_length=64)] | None = None
    mid: Annotated[str, Field(pattern=MID_PATTERN)] | None = None
    timestamp: str | int | None = None


async def on_transaction(
    session: AsyncSession, company_id: int, data: dict[str, Any], *, provider: str
) -> None:
    card_ref = data.get("cardId")
    card = (
        await service.event_card(
            session, company_id=company_id, provider=provider, card_ref=card_ref
        )
        if isinstance(card_ref, str)
        else None
    )
    if card is None:
        # Nothing to book it on (a card another platform holds at the provider): left.
        log.info("card_transaction_for_unknown_card", provider=provider)
        return
    parsed = _TransactionData.model_validate(data)
    if parsed.type not in EventType.__members__:
        log.info("card_transaction_not_a_purchase_event", provider=provider, type=parsed.type)
        return
    raw = parsed.timestamp
    await service.apply(
        session,
        company_id=company_id,
        card=card,
        event=service.ProviderEvent(
            provider=provider,
            event_id=parsed.transactionId,
            card_ref=parsed.cardId,
            authorization_id=parsed.authorizationId or parsed.transactionId,
            type=EventType(parsed.type),
            amount_minor=parsed.amountMinor,
            currency=parsed.currency,
            merchant=parsed.merchant,
            mcc=parsed.mcc,
            country=parsed.country,
            decline_reason=parsed.declineReason,
            timestamp=None if raw is None else str(raw)[:40],
            mid=parsed.mid,
        ),
    )


def _register(provider: str) -> None:
    async def handle(session: AsyncSession, company_id: int, data: dict[str, Any]) -> None:
        await on_transaction(session, company_id, data, provider=provider)

    inbound.handler(provider, CARD_TRANSACTION)(handle)


for _provider in BankProvider:
    _register(_provider.value)
