"""Cancelled cards that still hold money.

A cancelled card's balance is booked back when it is cancelled (`finplat.cards.cancellation`),
but money can reach its ledger account afterwards: a funding that was in flight settles, a
purchase hold is released. Each run books that back too (`cancellation.return_balance`: an
unpaid decline fee first, the rest to the master account), and reports each booking beside
the transactions, type `CARD_CANCELLATION_RETURN`, with the funding's id.
"""

from __future__ import annotations

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.cards import cancellation
from finplat.cards.repository import CardRepository
from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.reconciliation import repository
from finplat.reconciliation.report import ReconciliationReport, SettledTransaction

log = structlog.get_logger("finplat.reconciliation")

CARD_CANCELLATION_RETURN = "CARD_CANCELLATION_RETURN"


async def companies(session: AsyncSession) -> list[int]:
    """Companies with a cancelled card holding money (system scope)."""
    return sorted({c for c, _ in await repository.cancelled_cards_holding_money(session)})


async def settle(
    factory: async_sessionmaker[AsyncSession], company_id: int, report: ReconciliationReport
) -> None:
    """Book back what the company's cancelled cards hold, one unit of work per card."""
    async with unit_of_work(factory) as session:
        bind_company(session, company_id)
        found = await repository.cancelled_cards_holding_money(session, company_id=company_id)
    for _, card_id in found:
        async with unit_of_work(factory) as session:
            bind_company(session, company_id)
            card = await CardRepository(session, company_id).find(card_id, lock=True)
            if card is None:
                continue
            written = await cancellation.return_balance(session, card)
            settled = [(row.id, row.status) for row in written]
        for funding_id, status in settled:
            report.settled.append(
                SettledTransaction(company_id, funding_id, CARD_CANCELLATION_RETURN, status)
            )
        if settled:
            log.info("cancelled_card_balance_returned", company_id=company_id, card_id=card_id)
