"""Decline-fee blocks the card provider has not confirmed.

A card that cannot pay its decline fee is blocked locally first (`SYSTEM_BLOCKED`, with
`provider_block_pending` set, committed before the provider is called) and then at the
provider, and the flag is cleared once the provider has answered. When the provider call fails
or its answer is lost, the purchase's decline and the fee owed still stand, but the card may
still be spendable at the provider: `confirm_pending` (the background jobs, every few seconds)
settles each flagged card until the provider agrees with the local status:

* still `SYSTEM_BLOCKED` here: blocked at the provider (the block is idempotent there; a card
  the provider already shows blocked, cancelled or no longer knows needs nothing more);
* unblocked here in the meantime (the fee was paid) or cancelled: a late block that may have
  landed after the provider's unblock is undone;

and the flag is cleared only when the card's local status did not move while the provider was
being asked (otherwise the next round looks again). No row lock is held across a provider call.
"""

from __future__ import annotations

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.cards import lookup, programs
from finplat.cards.models import Card
from finplat.cards.repository import CardRepository, awaiting_provider_block
from finplat.cards.status import CardStatus
from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.errors import ApiError
from finplat.providers.cards.port import CardAction, ProviderCardStatus
from finplat.providers.registry import Providers

log = structlog.get_logger("finplat.cards.funding.provider_blocks")

BATCH = 50
# What the provider shows for a card that can no longer spend: nothing to block.
CANNOT_SPEND = frozenset({ProviderCardStatus.BLOCKED, ProviderCardStatus.CANCELLED})


async def block(session: AsyncSession, providers: Providers, card: Card) -> None:
    """Block `card` (locally `SYSTEM_BLOCKED`, flagged, the caller's changes committed by the
    call) at its provider and clear the flag when the provider confirms while the card is
    still blocked here. A failure or a lost answer leaves the flag for `confirm_pending`."""
    company_id, card_id = card.company_id, card.id
    try:
        await programs.change_at_provider(session, providers, card, CardAction.BLOCK)
    except ApiError as exc:
        log.warning("card_block_deferred", card_id=card_id, code=exc.code)
        return
    await _settled(session, company_id, card_id, CardStatus.SYSTEM_BLOCKED)


async def confirm_pending(factory: async_sessionmaker[AsyncSession], providers: Providers) -> int:
    """One round over the flagged cards; returns how many were settled (flag cleared)."""
    async with unit_of_work(factory) as session:
        waiting = await awaiting_provider_block(session, limit=BATCH)
    settled = 0
    for company_id, card_id in waiting:
        try:
            async with unit_of_work(factory) as session:
                bind_company(session, company_id)
                settled += await _confirm(session, providers, company_id, card_id)
        except ApiError as exc:
            log.warning("card_block_deferred", card_id=card_id, code=exc.code)
    return settled


async def _confirm(
    session: AsyncSession, providers: Providers, company_id: int, card_id: int
) -> bool:
    card = await lookup.find_card(session, company_id=company_id, card_id=card_id)
    local = CardStatus(card.status)
    if local != CardStatus.CANCELLED and card.provider_card_id is not None:
        seen = await programs.provider_view(session, providers, card)
        # A card the provider no longer knows cannot spend either.
        spendable = seen is not None and seen.status not in CANNOT_SPEND
        if local == CardStatus.SYSTEM_BLOCKED and spendable:
            await programs.change_at_provider(session, providers, card, CardAction.BLOCK)
        elif (
            local != CardStatus.SYSTEM_BLOCKED
            and seen is not None
            and seen.status == ProviderCardStatus.BLOCKED
        ):
            await programs.change_at_provider(session, providers, card, CardAction.UNBLOCK)
    return await _settled(session, company_id, card_id, local)


async def _settled(session: AsyncSession, company_id: int, card_id: int, status: str) -> bool:
    """Clear the flag if the card is still in `status` (read under its row lock)."""
    fresh = await CardRepository(session, company_id).find(card_id, lock=True)
    if fresh is None or fresh.status != status:
        return False
    fresh.provider_block_pending = False
    await session.flush()
    return True
