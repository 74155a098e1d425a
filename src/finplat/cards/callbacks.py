"""Card providers' `card.status_changed` callbacks (for example PENDING → ACTIVE once the
provider has produced a virtual card, or INACTIVE for a physical one awaiting activation, or
CANCELLED when the provider cancelled a card on its own: `cancellation`)."""

from __future__ import annotations

from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards import cancellation
from finplat.cards.repository import CardRepository
from finplat.cards.status import PROVIDER_STATUS, CardStatus
from finplat.kit.clock import utcnow
from finplat.providers import inbound
from finplat.providers.cards.port import CARD_STATUS_CHANGED, ProviderCardStatus
from finplat.providers.names import BankProvider

log = structlog.get_logger("finplat.cards")


async def on_status_changed(
    session: AsyncSession, company_id: int, data: dict[str, Any], *, provider: str
) -> None:
    reported = PROVIDER_STATUS[ProviderCardStatus(str(data["status"]))]
    cards = CardRepository(session, company_id)
    card = await cards.by_provider_card(provider, str(data["cardId"]))
    if card is None:
        # Ordered but not recorded yet: the card's next read adopts the provider's status.
        log.info("card_status_for_unknown_card", provider=provider)
        return
    if card.status == CardStatus.CANCELLED:
        return
    if reported == CardStatus.CANCELLED:
        await cancellation.apply_provider_cancellation(session, company_id, card.id)
        return
    # A production report only moves a card still waiting for it.
    if data.get("reason") == "produced" and card.status != CardStatus.PENDING:
        return
    # A decline-fee block stands until the fee is paid, whatever the provider reports.
    if card.take_provider_status(reported):
        card.updated_at = utcnow()
    await cards.save(card)  # what changed, if anything (a block may only be flagged)


def _register(provider: str) -> None:
    async def handle(session: AsyncSession, company_id: int, data: dict[str, Any]) -> None:
        await on_status_changed(session, company_id, data, provider=provider)

    inbound.handler(provider, CARD_STATUS_CHANGED)(handle)


for _provider in BankProvider:
    _register(_provider.value)
