"""A load request's states and the event each change sends (`mor.load_request.<state>`):
PENDING -> APPROVED (decided, the load under way) -> FUNDED | FAILED; PENDING -> DECLINED;
PENDING -> CANCELLED (the card was unassigned or cancelled before a decision)."""

from __future__ import annotations

from enum import StrEnum

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.events import service as events
from finplat.kit.clock import utcnow
from finplat.kit.money import from_minor
from finplat.mor.cards.models import MorLoadRequest
from finplat.mor.cards.repository import LoadRequestRepository


class MorLoadRequestStatus(StrEnum):
    PENDING = "PENDING"
    APPROVED = "APPROVED"
    FUNDED = "FUNDED"
    DECLINED = "DECLINED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"


FINAL = frozenset(
    {
        MorLoadRequestStatus.FUNDED,
        MorLoadRequestStatus.DECLINED,
        MorLoadRequestStatus.FAILED,
        MorLoadRequestStatus.CANCELLED,
    }
)


async def move(session: AsyncSession, row: MorLoadRequest, status: MorLoadRequestStatus) -> None:
    """Put the request in `status` and send its event, in the caller's transaction."""
    row.status = status.value
    if status != MorLoadRequestStatus.FUNDED:
        row.decided_at = utcnow()
    await session.flush()
    await events.record(
        session,
        company_id=row.company_id,
        type_=f"mor.load_request.{status.value.lower()}",
        domain="mor",
        data=event_data(row),
    )


def event_data(row: MorLoadRequest) -> dict[str, object]:
    return {
        "loadRequestId": row.id,
        "userId": row.user_id,
        "cardId": row.card_id,
        "amount": str(from_minor(row.amount_minor, row.currency)),
        "currency": row.currency,
        "status": row.status,
        "failureCode": row.failure_code,
        "fundingId": row.funding_id,
    }


async def cancel_pending_of_card(session: AsyncSession, *, company_id: int, card_id: int) -> None:
    """The card's undecided requests end `CANCELLED`: the card changed hands or was cancelled,
    so a later approval would load it for someone who no longer has it."""
    for row in await LoadRequestRepository(session, company_id).pending_of_card(card_id):
        await move(session, row, MorLoadRequestStatus.CANCELLED)
