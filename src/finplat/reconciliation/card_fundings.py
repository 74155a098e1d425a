"""Card fundings (top-ups, unloads, decline-fee collections) left `PENDING` by a provider
timeout or outage.

A reservation whose provider outcome is unknown is never released on a guess. A client with an
Idempotency-Key settles it by retrying; one without (or one that never retries) leaves it to
this step: once a funding has been pending for `SETTLE_AFTER`, it is resumed under its own
provider key (`funding.settle_pending`), so the provider confirms the movement it made
(posted), makes it now (posted) or refuses it (released, `FAILED`). A provider still not
answering leaves it pending until the next run. Fundings are reported beside the transactions,
type `CARD_FUNDING`, with the funding's id (the top-up's `OrderId`).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.cards.funding import service as funding
from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.errors import ApiError
from finplat.kit.clock import utcnow
from finplat.providers.registry import Providers
from finplat.reconciliation import repository
from finplat.reconciliation.report import (
    PendingTransaction,
    ReconciliationReport,
    SettledTransaction,
)

log = structlog.get_logger("finplat.reconciliation")

CARD_FUNDING = "CARD_FUNDING"
# Long enough for a client's own retry to come first; short enough that money does not stay
# reserved for long after an outage.
SETTLE_AFTER = timedelta(minutes=5)
UNDECIDED = "the provider has not decided"


async def companies(session: AsyncSession) -> list[int]:
    """Companies with a card funding pending for longer than `SETTLE_AFTER` (system scope)."""
    return await repository.companies_with_stale_card_fundings(
        session, before=utcnow() - SETTLE_AFTER
    )


async def settle(
    factory: async_sessionmaker[AsyncSession],
    providers: Providers,
    company_id: int,
    report: ReconciliationReport,
) -> None:
    """Settle the company's card fundings pending for longer than `SETTLE_AFTER`, one unit of
    work per card, and report each as settled or still pending."""
    before = utcnow() - SETTLE_AFTER
    async with unit_of_work(factory) as session:
        bind_company(session, company_id)
        stale = await repository.stale_card_fundings(session, company_id=company_id, before=before)
    by_card: dict[int, list[int]] = defaultdict(list)
    for funding_id, card_id in stale:
        by_card[card_id].append(funding_id)
    for card_id, funding_ids in by_card.items():
        reason = UNDECIDED
        try:
            async with unit_of_work(factory) as session:
                bind_company(session, company_id)
                await funding.settle_pending(
                    session,
                    providers,
                    company_id=company_id,
                    card_id=card_id,
                    created_before=before,
                )
        except ApiError as exc:  # the provider failed: the fundings stay pending
            reason = f"settle failed: {exc.code}"
            log.warning(
                "reconciliation_card_funding_failed",
                company_id=company_id,
                card_id=card_id,
                error_code=exc.code,
            )
        except Exception as exc:  # one card's failure must not stop the others
            reason = f"settle error: {type(exc).__name__}"
            log.error(
                "reconciliation_card_funding_error",
                company_id=company_id,
                card_id=card_id,
                error_type=type(exc).__name__,
            )
        async with unit_of_work(factory) as session:
            bind_company(session, company_id)
            statuses = await repository.card_funding_statuses(
                session, company_id=company_id, funding_ids=funding_ids
            )
        for funding_id in funding_ids:
            status = statuses.get(funding_id, "")
            if status == funding.FundingStatus.PENDING.value:
                report.pending.append(
                    PendingTransaction(company_id, funding_id, CARD_FUNDING, reason)
                )
            else:
                report.settled.append(
                    SettledTransaction(company_id, funding_id, CARD_FUNDING, status)
                )
